#include "image/chunk_unpack.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <vector>

#include "common/unique_fd.h"
#include "image/checksum.h"
#include "image/chunk_codec.h"
#include "image/stream_group.h"

namespace cedana::image {
namespace {

struct Placed {
  const ChunkEntry* chunk;
  size_t file;
  uint64_t offset;
};

Status WriteAt(int fd, const std::string& path, uint64_t offset, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "writing " + path);
    data.remove_prefix(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return OkStatus();
}

}  // namespace

Result<ChunkIndex> ReadVerifiedIndex(storage::CheckpointStore& store,
                                     const storage::CheckpointRef& ref,
                                     const ChunkIndexInfo& want) {
  auto read = store.ReadFile(ref, kChunkIndexName, storage::kMaxCheckpointFileBytes);
  if (!read.has_value())
    return std::move(read).error().WithContext("reading the chunk index of " + ref.Path());
  const std::string& json = *read;
  if (json.size() != want.bytes || Sha256Hex(json) != want.sha256)
    return AbortedError(
        fmt::format("chunk index of {}: checksum mismatch (stored data altered)", ref.Path()));
  return ParseChunkIndex(json);
}

Result<std::string_view> ReadVerifiedChunk(storage::CheckpointStore& store,
                                           const storage::CheckpointRef& ref,
                                           const ChunkEntry& chunk, Digest algorithm,
                                           ChunkBuffer* buffer) {
  const std::string& digest = chunk.digest;
  Status read = store.ReadChunk({ref.owner, ref.label, digest},
                                MaxStoredChunkBytes(chunk.raw_bytes), &buffer->stored);
  if (!read.ok())
    return std::move(read).WithContext(fmt::format("chunk {} of label {}", digest, ref.label));
  return VerifyStoredChunk(ref, chunk, algorithm, buffer);
}

Result<std::string_view> VerifyStoredChunk(const storage::CheckpointRef& ref,
                                           const ChunkEntry& chunk, Digest algorithm,
                                           ChunkBuffer* buffer) {
  const std::string& digest = chunk.digest;
  // Either way the stored chunk is not the one the signed index names; a decoder's reason says
  // how it differs.
  auto raw = DecodeChunk(buffer->stored, chunk.raw_bytes, &buffer->decoded);
  if (!raw.has_value() || raw->size() != chunk.raw_bytes || DigestHex(algorithm, *raw) != digest)
    return AbortedError(
        fmt::format("chunk {} of label {}: checksum mismatch (stored data altered or truncated{})",
                    digest, ref.label, raw.has_value() ? "" : ": " + raw.error().message()));
  return raw;
}

Status UnpackChunks(storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                    const Manifest& manifest, const std::string& images_dir, int threads,
                    ProgressReporter* progress, const std::atomic<bool>* cancel) {
  if (!manifest.chunk_index) return OkStatus();
  CEDANA_ASSIGN_OR_RETURN(ChunkIndex index, ReadVerifiedIndex(store, ref, *manifest.chunk_index));
  std::vector<UniqueFd> fds;
  std::vector<std::string> paths;
  std::vector<Placed> placed;
  for (size_t i = 0; i < index.files.size(); ++i) {
    const ChunkedFile& f = index.files[i];
    paths.push_back(images_dir + "/" + f.name);
    UniqueFd fd(
        ::open(paths.back().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) return ErrnoStatus(errno, "creating " + paths.back());
    if (::ftruncate(fd.get(), static_cast<off_t>(f.size)) != 0)
      return ErrnoStatus(errno, "sizing " + paths.back());
    fds.push_back(std::move(fd));
    uint64_t offset = 0;
    for (const ChunkEntry& c : f.chunks) {
      placed.push_back({&c, i, offset});
      offset += c.raw_bytes;
    }
  }

  std::atomic<size_t> next{0};
  StreamGroup group([&ref](int i) { return fmt::format("chunk reader {} of {}", i, ref.Path()); });
  return group.Run(std::max(1, threads), [&](int) -> Status {
    ChunkBuffer buffer;
    for (size_t i = next++; i < placed.size(); i = next++) {
      if (group.cancelled() || (cancel && cancel->load())) return CancelledError();
      const Placed& p = placed[i];
      CEDANA_ASSIGN_OR_RETURN(std::string_view raw,
                              ReadVerifiedChunk(store, ref, *p.chunk, manifest.digest, &buffer));
      CEDANA_RETURN_IF_ERROR(WriteAt(fds[p.file].get(), paths[p.file], p.offset, raw));
      if (progress) progress->Add(p.chunk->raw_bytes);
    }
    return OkStatus();
  });
}

}  // namespace cedana::image
