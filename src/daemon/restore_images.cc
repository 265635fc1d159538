#include "daemon/restore_images.h"

#include <algorithm>
#include <thread>

#include "common/fs.h"
#include "common/log.h"
#include "daemon/caller_files.h"
#include "engine/image_serve.h"
#include "engine/streamer_protocol.h"
#include "image/direct_chunk_unpack.h"
#include "image/direct_unpack.h"
#include "image/pack.h"

namespace cedana::daemon {
namespace {

// CRIU restores each process on its own core, and with more processes than cores keeps them all
// busy. A deduplicated checkpoint's compressed chunks, each decoded as CRIU asks for it and sent
// through a pipe, then restore slower than an images dir unpacked first: 1 GiB of typical data
// in 8 processes on 2 cores, lz4 x4, 6 alternating pairs, caches dropped: 1.42 s direct against
// 1.16 s, medians; with the chunks decoded straight into their buffers and eight read ahead,
// 4 pairs: 1.27 s against 1.15 s. From streams, whose threads unpack at their own pace, direct is
// as fast or faster (lz4 x4 0.79 against 1.04 s, zstd x4 0.96/0.97, gzip x4 2.33/2.35): those stay
// direct. Counted from the heads (pagemap-<id>.img, one per process with memory).
bool CriuUsesEveryCore(const std::string& images_dir) {
  auto names = fs::ListDir(images_dir);
  if (!names.has_value()) return false;
  unsigned processes = 0;
  for (const std::string& n : *names)
    if (n.rfind("pagemap-", 0) == 0) ++processes;
  return processes > std::max(1u, std::thread::hardware_concurrency());
}

// The images of a direct restore, served to CRIU with the file-system identity the unpack
// writes them with.
class ServedImages : public engine::ImageSource {
 public:
  ServedImages(image::DirectRestoreSource* unpack, uid_t uid, gid_t gid)
      : unpack_(unpack), uid_(uid), gid_(gid) {}
  Result<bool> Has(const std::string& name) override {
    AsFileUser as(uid_, gid_);
    return unpack_->Has(name);
  }
  Status Send(const std::string& name, int pipe_fd) override {
    AsFileUser as(uid_, gid_);
    return unpack_->Send(name, pipe_fd);
  }
  Result<std::optional<engine::InPlaceImage>> InPlace(const std::string& name) override {
    AsFileUser as(uid_, gid_);
    CEDANA_ASSIGN_OR_RETURN(std::optional<image::InPlaceImage> image, unpack_->InPlace(name));
    if (!image) return std::optional<engine::InPlaceImage>();
    engine::InPlaceImage served{std::move(image->files), {}};
    for (const image::StoredRun& run : image->runs)
      served.runs.push_back({static_cast<uint32_t>(run.file), run.offset, run.length});
    return std::make_optional(std::move(served));
  }

 private:
  image::DirectRestoreSource* unpack_;
  uid_t uid_;
  gid_t gid_;
};

class Images : public RestoreImages {
 public:
  Images(RestoreImagesSetup setup, bool try_direct)
      : setup_(std::move(setup)), try_direct_(try_direct) {}
  ~Images() override { Cancel(); }

  Status Unpack() override {
    AsFileUser as(setup_.store_uid, setup_.store_gid);  // the unpack's threads inherit it
    if (try_direct_ && SocketFits()) {
      image::DirectChunkUnpack* chunks = nullptr;
      Result<std::unique_ptr<image::DirectRestoreSource>> started = StartDirect(&chunks);
      if (started.has_value()) {
        unpack_ = std::move(started).value();
        if (Status heads = unpack_->WaitForHeads(); !heads.ok()) {
          Cancel();
          return heads;
        }
        if (chunks == nullptr || !CriuUsesEveryCore(setup_.images_dir)) return OkStatus();
        Status rest = chunks->CompleteImagesDir();
        unpack_.reset();
        return rest;  // all unpacked: a plain restore follows
      }
      if (started.error().code() != Code::kFailedPrecondition) return started.error();
    }
    return image::UnpackToImagesDir(*setup_.store, setup_.ref, *setup_.manifest, setup_.images_dir,
                                    setup_.progress);
  }

  bool direct() const override { return unpack_ != nullptr; }

  Status Serve(std::optional<std::pair<uid_t, gid_t>> criu_user) override {
    served_ = std::make_unique<ServedImages>(unpack_.get(), setup_.store_uid, setup_.store_gid);
    CEDANA_ASSIGN_OR_RETURN(
        server_, engine::ImageServe::Listen(setup_.images_dir, criu_user, served_.get()));
    return OkStatus();
  }

  Status Verified() override {
    Status verified = unpack_->Finish();
    server_->Stop();
    unpack_.reset();
    return verified;
  }

  size_t ImagesInPlace() const override { return server_ ? server_->ImagesInPlace() : 0; }

  Status Failure() const override { return unpack_ ? unpack_->Failure() : OkStatus(); }

  void Cancel() override {
    if (!unpack_) return;
    unpack_->Cancel();  // ends the sends still waiting for pages
    (void)unpack_->Finish();
    if (server_) server_->Stop();
    unpack_.reset();
  }

 private:
  // A deduplicated checkpoint's pages come from its chunks (`*chunks` then points at the source
  // returned); any other's from its streams.
  Result<std::unique_ptr<image::DirectRestoreSource>> StartDirect(
      image::DirectChunkUnpack** chunks) const {
    std::unique_ptr<image::DirectRestoreSource> source;
    if (setup_.manifest->chunk_index) {
      CEDANA_ASSIGN_OR_RETURN(
          std::unique_ptr<image::DirectChunkUnpack> chunked,
          image::DirectChunkUnpack::Start(*setup_.store, setup_.ref, *setup_.manifest,
                                          setup_.images_dir, setup_.progress));
      *chunks = chunked.get();
      source = std::move(chunked);
    } else {
      CEDANA_ASSIGN_OR_RETURN(
          source, image::DirectUnpack::Start(*setup_.store, setup_.ref, *setup_.manifest,
                                             setup_.images_dir, setup_.progress));
    }
    return source;
  }

  // CRIU reaches a direct restore's images through a unix socket in the images dir; under a
  // work dir too long for one the restore unpacks first instead.
  bool SocketFits() const {
    const std::string socket = setup_.images_dir + "/" + engine::kStreamerServeSocket;
    if (socket.size() <= engine::kMaxSocketPathBytes) return true;
    log::Info(
        "restore: {} is too long a path for CRIU's image streamer ({} bytes, at most {}); "
        "unpacking first (a shorter checkpoint.work_dir restores directly)",
        socket, socket.size(), engine::kMaxSocketPathBytes);
    return false;
  }

  const RestoreImagesSetup setup_;
  const bool try_direct_;
  std::unique_ptr<image::DirectRestoreSource> unpack_;
  std::unique_ptr<ServedImages> served_;
  std::unique_ptr<engine::ImageServe> server_;
};

}  // namespace

std::unique_ptr<RestoreImages> UnpackedFirst(RestoreImagesSetup setup) {
  return std::make_unique<Images>(std::move(setup), false);
}

std::unique_ptr<RestoreImages> DirectIfPossible(RestoreImagesSetup setup) {
  return std::make_unique<Images>(std::move(setup), true);
}

}  // namespace cedana::daemon
