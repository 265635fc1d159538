#include "daemon/dump_images.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/unique_fd.h"
#include "daemon/caller_files.h"
#include "image/checkpoint_listing.h"
#include "image/chunking.h"
#include "image/direct_chunk_pack.h"
#include "image/direct_pack.h"
#include "image/pack.h"

namespace cedana::daemon {
namespace {

// A full file system: says which dir it was, what is free there and about what was needed.
Status ExplainNoSpace(Status s, const std::string& what, const std::string& dir, uint64_t needed) {
  if (s.ok() || (s.message().find("No space left on device") == std::string::npos &&
                 s.message().find("Disk quota exceeded") == std::string::npos))
    return s;
  struct statvfs fs_stat {};
  std::string free_note;
  if (::statvfs(dir.c_str(), &fs_stat) == 0)
    free_note = fmt::format(", {} MiB free",
                            (static_cast<uint64_t>(fs_stat.f_bavail) * fs_stat.f_frsize) >> 20);
  return Status(s.code(), fmt::format("{} {} is full (about {} MiB needed{}; free space there, or "
                                      "point {} elsewhere): {}",
                                      what, dir, (needed + (1 << 20) - 1) >> 20, free_note,
                                      what == "work dir" ? "checkpoint.work_dir" : "checkpoint.dir",
                                      s.message()));
}

// The dump's log line on a deduplicated checkpoint.
std::string DedupNote(const image::ChunkIndexInfo& c) {
  return fmt::format(", deduplicated: {} of {} chunks new, {} MiB of {} stored", c.new_chunks,
                     c.chunks, c.new_stored_bytes >> 20, c.raw_bytes >> 20);
}

Status StoreFailure(const DumpImagesSetup& setup, Status s, uint64_t needed) {
  return ExplainNoSpace(std::move(s), "checkpoint dir", setup.store->Describe(), needed)
      .WithContext("packing checkpoint " + setup.ref.id + " into " + setup.store->Describe());
}

class Packed : public DumpImages {
 public:
  explicit Packed(DumpImagesSetup setup) : setup_(std::move(setup)) {}

  Status Capture(const engine::CheckpointEngine& engine,
                 const engine::DumpRequest& request) override {
    if (Status s = engine.Dump(request); !s.ok())
      return ExplainNoSpace(s, "work dir", setup_.work_dir, setup_.expected_bytes())
          .WithContext(fmt::format("dumping pid {}", request.pid));
    return OkStatus();
  }

  Result<StoredImages> Store() override {
    StoredImages out;
    CEDANA_ASSIGN_OR_RETURN(out.images_bytes, fs::TreeSize(setup_.images_dir));
    image::PackOptions options;
    options.streams = setup_.streams;
    options.codec = setup_.codec;
    options.level = setup_.level;
    options.dedup = setup_.dedup;
    if (setup_.progress)
      options.progress = [this](uint64_t done, uint64_t total) {
        setup_.progress("packing", done, total);
      };
    // The pack's threads inherit this thread's file-system identity.
    AsFileUser as_owner(setup_.store_uid, setup_.store_gid);
    Result<image::PackedImages> packed =
        image::PackImagesDir(setup_.images_dir, *setup_.store, setup_.ref, options);
    if (!packed.has_value()) return StoreFailure(setup_, packed.error(), out.images_bytes);
    out.streams = std::move(packed->streams);
    out.chunk_index = packed->chunk_index;
    if (const auto& c = out.chunk_index) out.note = DedupNote(*c);
    return out;
  }

  void Abort() override {}  // PackImagesDir has joined its threads when it returns

 private:
  DumpImagesSetup setup_;
};

// The receiving end of CRIU's image streamer: each file goes to the pack, and all but the pages
// images also to the images dir. With a chunk pack (a deduplicated direct dump) the pages images
// go to it instead of the pack. Called from the image streamer's thread only.
class PackReceiver : public engine::ImageReceiver {
 public:
  PackReceiver(image::DirectPack* pack, image::DirectChunkPack* chunks, std::string dir)
      : pack_(pack), chunks_(chunks), dir_(std::move(dir)) {}

  Result<int> Open(const std::string& name) override {
    File file;
    if (chunks_ && image::IsPagesImage(name)) {
      file.chunked = true;
      CEDANA_ASSIGN_OR_RETURN(file.id, chunks_->OpenFile(name));
    } else {
      CEDANA_ASSIGN_OR_RETURN(file.id, pack_->OpenFile(name));  // refuses unsafe names
    }
    if (!image::IsPagesImage(name)) {
      std::string path = dir_ + "/" + name;
      file.local.Reset(
          ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!file.local.valid()) return ErrnoStatus(errno, "creating " + path);
    }
    files_.push_back(std::move(file));
    return static_cast<int>(files_.size() - 1);
  }
  Status Write(int handle, const void* data, size_t size) override {
    CEDANA_ASSIGN_OR_RETURN(File * file, Find(handle));
    if (file->local.valid()) {
      const char* p = static_cast<const char*>(data);
      for (size_t left = size; left > 0;) {
        ssize_t n = ::write(file->local.get(), p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return ErrnoStatus(errno, "writing to " + dir_);
        p += n;
        left -= static_cast<size_t>(n);
      }
    }
    return file->chunked ? chunks_->Append(file->id, data, size)
                         : pack_->Append(file->id, data, size);
  }
  Status Close(int handle) override {
    CEDANA_ASSIGN_OR_RETURN(File * file, Find(handle));
    file->local.Reset();
    return file->chunked ? chunks_->CloseFile(file->id) : pack_->CloseFile(file->id);
  }

 private:
  struct File {
    int id = -1;           // in the pack it goes to
    bool chunked = false;  // to the chunk pack
    UniqueFd local;        // its copy in the images dir, if any
  };
  Result<File*> Find(int handle) {
    if (handle < 0 || static_cast<size_t>(handle) >= files_.size())
      return InternalError(fmt::format("image streamer: no file {}", handle));
    return &files_[handle];
  }

  image::DirectPack* pack_;
  image::DirectChunkPack* chunks_;  // nullptr: the pages go to the pack
  std::string dir_;
  std::vector<File> files_;
};

// How much of checkpoint.memory_limit_mib a direct dump may hold as image data. The limit is the
// daemon's whole size during the dump, and the daemon holds more than the buffers: its own memory
// and each stream's compressor (26-41 MiB beyond 255 MiB of buffers, measured with 4 streams),
// with dedup each worker's compressor and compressed chunks (about 110 MiB with 4 workers), and
// the store's own stream buffers (`store_buffers`: an S3 store's parts). That share is kept out
// of the buffers, which still get at least what the packs need to work: one part, or one chunk
// region and 8 MiB.
uint64_t DirectBufferBytes(uint64_t memory_limit, bool dedup, uint64_t part_bytes,
                           uint64_t store_buffers) {
  const uint64_t beside = (dedup ? 128ull << 20 : 64ull << 20) + store_buffers;
  const uint64_t least = dedup ? image::kChunkRegionBytes + (8ull << 20) : part_bytes;
  return std::max(memory_limit > beside ? memory_limit - beside : 0, least);
}

class Direct : public DumpImages {
 public:
  explicit Direct(DumpImagesSetup setup) : setup_(std::move(setup)) {}

  Status Capture(const engine::CheckpointEngine& engine,
                 const engine::DumpRequest& request) override {
    image::DirectPackOptions options;
    options.streams = setup_.streams;
    options.codec = setup_.codec;
    options.level = setup_.level;
    options.memory_limit = DirectBufferBytes(setup_.memory_limit, setup_.dedup, options.part_bytes,
                                             setup_.store->StreamMemoryLimit());
    if (setup_.progress)
      options.progress = [this](uint64_t done, uint64_t) { setup_.progress("dumping", done, 0); };
    {
      // The packs' threads are created here and inherit this file-system identity; CRIU and
      // the image streamer's thread (the local images dir) do not.
      AsFileUser as_owner(setup_.store_uid, setup_.store_gid);
      if (setup_.dedup) {
        // The pages, nearly all of the bytes, get most of the buffers; the other images are
        // small and pass through the pack in parts of an eighth of them.
        const uint64_t buffers = options.memory_limit;
        const uint64_t pack_share = std::max<uint64_t>(buffers / 8, 8ull << 20);
        options.memory_limit = pack_share;
        options.part_bytes = std::min<uint64_t>(options.part_bytes, pack_share);
        image::DirectChunkPackOptions chunking{setup_.streams, setup_.codec, setup_.level,
                                               buffers - pack_share};
        CEDANA_ASSIGN_OR_RETURN(chunks_,
                                image::DirectChunkPack::Start(*setup_.store, setup_.ref, chunking));
      }
      CEDANA_ASSIGN_OR_RETURN(
          pack_, image::DirectPack::Start(*setup_.store, setup_.ref, std::move(options)));
    }
    PackReceiver receiver(pack_.get(), chunks_.get(), setup_.images_dir);
    if (Status s = engine.DumpDirect(request, &receiver); !s.ok()) {
      // A store failure is the cause; CRIU's failure is then only its consequence.
      Status cause = pack_->Abort();
      if (chunks_ && cause.ok()) cause = chunks_->Abort();
      if (!cause.ok())
        return StoreFailure(setup_, cause, setup_.expected_bytes())
            .WithContext(fmt::format("dumping pid {}", request.pid));
      return s.WithContext(fmt::format("dumping pid {}", request.pid));
    }
    return OkStatus();
  }

  Result<StoredImages> Store() override {
    AsFileUser as_owner(setup_.store_uid, setup_.store_gid);
    Result<std::vector<image::StreamInfo>> packed = pack_->Finish();
    const image::DirectPackStats stats = pack_->stats();
    if (!packed.has_value()) return StoreFailure(setup_, packed.error(), stats.file_bytes);
    StoredImages out;
    out.streams = std::move(packed).value();
    out.images_bytes = stats.file_bytes;
    uint64_t peak = stats.peak_buffered;
    int64_t waited_ms = stats.waited.count();
    int files = stats.files;
    if (chunks_) {
      Result<image::ChunkIndexInfo> index = chunks_->Finish();
      const image::DirectChunkPackStats chunk_stats = chunks_->stats();
      if (!index.has_value()) return StoreFailure(setup_, index.error(), chunk_stats.file_bytes);
      out.chunk_index = *index;
      out.images_bytes += chunk_stats.file_bytes;
      peak += chunk_stats.peak_buffered;
      waited_ms += chunk_stats.waited.count();
      files += chunk_stats.files;
    }
    out.note = fmt::format(", direct, {} files, peak buffer {} MiB, criu waited {} ms", files,
                           peak >> 20, waited_ms);
    if (const auto& c = out.chunk_index) out.note += DedupNote(*c);
    return out;
  }

  void Abort() override {
    if (pack_) (void)pack_->Abort();
    if (chunks_) (void)chunks_->Abort();
  }

 private:
  DumpImagesSetup setup_;
  std::unique_ptr<image::DirectPack> pack_;
  std::unique_ptr<image::DirectChunkPack> chunks_;  // deduplicated: the pages go here
};

}  // namespace

std::unique_ptr<DumpImages> PackedAfterDump(DumpImagesSetup setup) {
  return std::make_unique<Packed>(std::move(setup));
}

std::unique_ptr<DumpImages> DirectDuringDump(DumpImagesSetup setup) {
  return std::make_unique<Direct>(std::move(setup));
}

}  // namespace cedana::daemon
