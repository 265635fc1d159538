#include "image/chunk_pack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <unordered_set>

#include "common/log.h"
#include "common/unique_fd.h"
#include "image/checksum.h"
#include "image/chunk_codec.h"
#include "image/chunk_set.h"
#include "image/chunking.h"
#include "image/compressibility.h"
#include "image/stream_group.h"

namespace cedana::image {
namespace {

struct PagesFile {
  std::string name, path;
  uint64_t size = 0;
  Codec codec = Codec::kNone;
};

// One region of one file, chunked by one worker.
struct Region {
  size_t file = 0;
  uint64_t offset = 0, length = 0;
  std::vector<ChunkEntry> chunks;  // the result
};

Status ReadAt(int fd, const std::string& path, uint64_t offset, char* out, size_t length) {
  for (size_t got = 0; got < length;) {
    ssize_t n = ::pread(fd, out + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "reading " + path);
    if (n == 0) return AbortedError(path + " became shorter while it was packed");
    got += static_cast<size_t>(n);
  }
  return OkStatus();
}

class ChunkPacker {
 public:
  ChunkPacker(std::vector<PagesFile> files, storage::ChunkWriter* writer, ChunkSet* chunks,
              const ChunkPackOptions& options)
      : files_(std::move(files)), writer_(writer), chunks_(chunks), options_(options) {}

  // Stores the chunk at `offset` of file `f` when nobody has.
  Status StoreIfNew(const PagesFile& f, std::string_view data, const std::string& digest) {
    if (!chunks_->Claim(digest)) return OkStatus();
    CEDANA_ASSIGN_OR_RETURN(std::string stored, EncodeChunk(data, f.codec, options_.level));
    CEDANA_RETURN_IF_ERROR(writer_->Put(digest, stored)) << "storing a chunk of " << f.name;
    chunks_->Stored(stored.size());
    return OkStatus();
  }

  Status ChunkRegion(Region* r, std::string* buffer) {
    const PagesFile& f = files_[r->file];
    UniqueFd fd(::open(f.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return ErrnoStatus(errno, "opening " + f.path);
    buffer->resize(r->length);
    CEDANA_RETURN_IF_ERROR(ReadAt(fd.get(), f.path, r->offset, buffer->data(), r->length));
    const auto* bytes = reinterpret_cast<const unsigned char*>(buffer->data());
    size_t at = 0;
    for (size_t length : ChunkLengths(bytes, r->length)) {
      std::string_view chunk(buffer->data() + at, length);
      std::string digest = DigestHex(kNewDigest, chunk);
      CEDANA_RETURN_IF_ERROR(StoreIfNew(f, chunk, digest));
      r->chunks.push_back({std::move(digest), length});
      at += length;
    }
    return OkStatus();
  }

  const std::vector<PagesFile>& files() const { return files_; }

 private:
  const std::vector<PagesFile> files_;
  storage::ChunkWriter* writer_;
  ChunkSet* chunks_;
  const ChunkPackOptions& options_;
};

Result<std::vector<PagesFile>> StatFiles(const std::string& dir,
                                         const std::vector<std::string>& names,
                                         const ChunkPackOptions& options) {
  std::vector<PagesFile> files;
  for (const std::string& name : names) {
    PagesFile f{name, dir + "/" + name};
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat " + f.path);
    f.size = static_cast<uint64_t>(st.st_size);
    f.codec = options.codec;
    if (options.codec != Codec::kNone) {
      CEDANA_ASSIGN_OR_RETURN(
          auto verdict, JudgeCompressibility(options.codec, options.level, {{f.path, 0, f.size}}));
      if (!verdict.compress) {
        log::Info("image: {} stored raw: {} compressed {} KiB of samples to {} KiB", name,
                  CodecName(options.codec), verdict.sampled_bytes >> 10,
                  verdict.compressed_bytes >> 10);
        f.codec = Codec::kNone;
      }
    }
    files.push_back(std::move(f));
  }
  return files;
}

// Stores again the chunks of `index` the store no longer holds (a sweep removed them after this
// pack listed the store, because no committed checkpoint named them yet).
Status StoreMissing(ChunkPacker& packer, const ChunkIndex& index, storage::CheckpointStore& store,
                    const storage::CheckpointRef& ref, storage::ChunkWriter* writer, int level) {
  CEDANA_ASSIGN_OR_RETURN(auto missing, MissingChunks(store, ref, index));
  int restored = 0;
  std::string buffer;
  for (size_t i = 0; i < index.files.size() && !missing.empty(); ++i) {
    const PagesFile& f = packer.files()[i];
    uint64_t offset = 0;
    for (const ChunkEntry& c : index.files[i].chunks) {
      if (missing.erase(c.digest) > 0) {
        UniqueFd fd(::open(f.path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd.valid()) return ErrnoStatus(errno, "opening " + f.path);
        buffer.resize(c.raw_bytes);
        CEDANA_RETURN_IF_ERROR(ReadAt(fd.get(), f.path, offset, buffer.data(), c.raw_bytes));
        CEDANA_ASSIGN_OR_RETURN(std::string stored, EncodeChunk(buffer, f.codec, level));
        CEDANA_RETURN_IF_ERROR(writer->Put(c.digest, stored));
        ++restored;
      }
      offset += c.raw_bytes;
    }
  }
  if (restored == 0) return OkStatus();
  log::Warn(
      "image: {} chunks of label {} were removed while checkpoint {} was stored; stored "
      "them again",
      restored, ref.label, ref.id);
  return writer->Publish();
}

}  // namespace

Result<ChunkIndexInfo> WriteChunkIndex(storage::CheckpointStore& store,
                                       const storage::CheckpointRef& ref, const ChunkIndex& index) {
  std::string json = ChunkIndexToJson(index);
  if (json.size() > storage::kMaxCheckpointFileBytes)
    return FailedPreconditionError(
        fmt::format("the chunk index of {} would be {} bytes, more than {}", ref.Path(),
                    json.size(), storage::kMaxCheckpointFileBytes));
  CEDANA_RETURN_IF_ERROR(store.WriteFile(ref, kChunkIndexName, json))
      << "writing the chunk index of " << ref.Path();
  ChunkIndexInfo info;
  info.bytes = json.size();
  info.sha256 = Sha256Hex(json);
  for (const ChunkedFile& f : index.files) {
    info.chunks += f.chunks.size();
    info.raw_bytes += f.size;
  }
  return info;
}

Result<std::unordered_set<std::string>> MissingChunks(storage::CheckpointStore& store,
                                                      const storage::CheckpointRef& ref,
                                                      const ChunkIndex& index) {
  CEDANA_ASSIGN_OR_RETURN(auto listed, store.ListChunks(ref.owner, ref.label));
  std::unordered_set<std::string> present(listed.begin(), listed.end());
  std::unordered_set<std::string> missing;
  for (const ChunkedFile& f : index.files)
    for (const ChunkEntry& c : f.chunks)
      if (!present.count(c.digest)) missing.insert(c.digest);
  return missing;
}

Result<ChunkIndexInfo> PackChunks(const std::string& images_dir,
                                  const std::vector<std::string>& pages_files,
                                  storage::CheckpointStore& store,
                                  const storage::CheckpointRef& ref,
                                  const ChunkPackOptions& options, ProgressReporter* progress,
                                  const std::atomic<bool>* cancel) {
  CEDANA_ASSIGN_OR_RETURN(auto files, StatFiles(images_dir, pages_files, options));
  CEDANA_ASSIGN_OR_RETURN(auto stored, store.ListChunks(ref.owner, ref.label));
  CEDANA_ASSIGN_OR_RETURN(auto writer, store.WriteChunks(ref.owner, ref.label));
  ChunkSet chunks(std::move(stored));
  std::vector<Region> regions;
  for (size_t i = 0; i < files.size(); ++i)
    for (uint64_t off = 0; off < files[i].size; off += kChunkRegionBytes)
      regions.push_back({i, off, std::min<uint64_t>(kChunkRegionBytes, files[i].size - off), {}});

  ChunkPacker packer(std::move(files), writer.get(), &chunks, options);
  std::atomic<size_t> next{0};
  StreamGroup group([](int i) { return fmt::format("chunk worker {}", i); });
  CEDANA_RETURN_IF_ERROR(group.Run(std::max(1, options.threads), [&](int) -> Status {
    std::string buffer;
    for (size_t i = next++; i < regions.size(); i = next++) {
      if (group.cancelled() || (cancel && cancel->load())) return CancelledError();
      CEDANA_RETURN_IF_ERROR(packer.ChunkRegion(&regions[i], &buffer));
      if (progress) progress->Add(regions[i].length);
    }
    return OkStatus();
  }));
  CEDANA_RETURN_IF_ERROR(writer->Publish()) << "storing the chunks of " << ref.Path();

  ChunkIndex index;
  for (const PagesFile& f : packer.files()) index.files.push_back({f.name, f.size, {}});
  for (Region& r : regions) {
    auto& out = index.files[r.file].chunks;
    std::move(r.chunks.begin(), r.chunks.end(), std::back_inserter(out));
  }
  CEDANA_ASSIGN_OR_RETURN(ChunkIndexInfo info, WriteChunkIndex(store, ref, index));
  // Written first, so that a sweep from now on keeps its chunks; then checked, for a sweep that
  // ran before.
  CEDANA_RETURN_IF_ERROR(StoreMissing(packer, index, store, ref, writer.get(), options.level));
  info.new_chunks = chunks.new_chunks();
  info.new_stored_bytes = chunks.new_stored_bytes();
  return info;
}

}  // namespace cedana::image
