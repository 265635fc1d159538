#include "daemon/dump_images.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/unique_fd.h"
#include "daemon/caller_files.h"
#include "image/checkpoint_listing.h"
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
    if (const auto& c = out.chunk_index)
      out.note =
          fmt::format(", deduplicated: {} of {} chunks new, {} MiB of {} stored", c->new_chunks,
                      c->chunks, c->new_stored_bytes >> 20, c->raw_bytes >> 20);
    return out;
  }

  void Abort() override {}  // PackImagesDir has joined its threads when it returns

 private:
  DumpImagesSetup setup_;
};

// The receiving end of CRIU's image streamer: each file goes to the pack, and all but the pages
// images also to the images dir. Called from the image streamer's thread only.
class PackReceiver : public engine::ImageReceiver {
 public:
  PackReceiver(image::DirectPack* pack, std::string dir) : pack_(pack), dir_(std::move(dir)) {}

  Result<int> Open(const std::string& name) override {
    CEDANA_ASSIGN_OR_RETURN(int id, pack_->OpenFile(name));  // refuses unsafe names
    UniqueFd fd;
    if (!image::IsPagesImage(name)) {
      std::string path = dir_ + "/" + name;
      fd.Reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!fd.valid()) return ErrnoStatus(errno, "creating " + path);
    }
    if (local_.size() <= static_cast<size_t>(id)) local_.resize(id + 1);
    local_[id] = std::move(fd);
    return id;
  }
  Status Write(int file, const void* data, size_t size) override {
    if (file >= 0 && static_cast<size_t>(file) < local_.size() && local_[file].valid()) {
      const char* p = static_cast<const char*>(data);
      for (size_t left = size; left > 0;) {
        ssize_t n = ::write(local_[file].get(), p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return ErrnoStatus(errno, "writing to " + dir_);
        p += n;
        left -= static_cast<size_t>(n);
      }
    }
    return pack_->Append(file, data, size);
  }
  Status Close(int file) override {
    if (file >= 0 && static_cast<size_t>(file) < local_.size()) local_[file].Reset();
    return pack_->CloseFile(file);
  }

 private:
  image::DirectPack* pack_;
  std::string dir_;
  std::vector<UniqueFd> local_;
};

class Direct : public DumpImages {
 public:
  explicit Direct(DumpImagesSetup setup) : setup_(std::move(setup)) {}

  Status Capture(const engine::CheckpointEngine& engine,
                 const engine::DumpRequest& request) override {
    image::DirectPackOptions options;
    options.streams = setup_.streams;
    options.codec = setup_.codec;
    options.memory_limit = setup_.memory_limit;
    if (setup_.progress)
      options.progress = [this](uint64_t done, uint64_t) { setup_.progress("dumping", done, 0); };
    {
      // The pack's threads are created here and inherit this file-system identity; CRIU and
      // the image streamer's thread (the local images dir) do not.
      AsFileUser as_owner(setup_.store_uid, setup_.store_gid);
      CEDANA_ASSIGN_OR_RETURN(
          pack_, image::DirectPack::Start(*setup_.store, setup_.ref, std::move(options)));
    }
    PackReceiver receiver(pack_.get(), setup_.images_dir);
    if (Status s = engine.DumpDirect(request, &receiver); !s.ok()) {
      // A store failure is the cause; CRIU's failure is then only its consequence.
      if (Status cause = pack_->Abort(); !cause.ok())
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
    out.note = fmt::format(", direct, {} files, peak buffer {} MiB, criu waited {} ms", stats.files,
                           stats.peak_buffered >> 20, stats.waited.count());
    return out;
  }

  void Abort() override {
    if (pack_) (void)pack_->Abort();
  }

 private:
  DumpImagesSetup setup_;
  std::unique_ptr<image::DirectPack> pack_;
};

}  // namespace

std::unique_ptr<DumpImages> PackedAfterDump(DumpImagesSetup setup) {
  return std::make_unique<Packed>(std::move(setup));
}

std::unique_ptr<DumpImages> DirectDuringDump(DumpImagesSetup setup) {
  return std::make_unique<Direct>(std::move(setup));
}

}  // namespace cedana::daemon
