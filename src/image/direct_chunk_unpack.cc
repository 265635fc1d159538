#include "image/direct_chunk_unpack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <future>

#include "common/unique_fd.h"
#include "image/chunk_unpack.h"
#include "image/criu_pipe.h"
#include "image/pack.h"
#include "image/stream_group.h"
#include "image/tar.h"
#include "image/unpack_stream.h"

namespace cedana::image {
namespace {

// Chunks read (and verified) ahead of the one being written to CRIU: a store's latency and the
// digest then overlap CRIU's copy into the process. At most 4 MiB each.
constexpr size_t kChunksAhead = 4;

}  // namespace

Result<std::unique_ptr<DirectChunkUnpack>> DirectChunkUnpack::Start(
    storage::CheckpointStore& store, const storage::CheckpointRef& ref, const Manifest& manifest,
    const std::string& images_dir, ProgressFn progress) {
  if (!manifest.chunk_index)
    return FailedPreconditionError("checkpoint " + manifest.id + " is not deduplicated");
  if (manifest.streams.empty()) return InvalidArgumentError("checkpoint has no streams");
  return std::unique_ptr<DirectChunkUnpack>(
      new DirectChunkUnpack(store, ref, manifest, images_dir, std::move(progress)));
}

DirectChunkUnpack::DirectChunkUnpack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                                     const Manifest& manifest, std::string images_dir,
                                     ProgressFn progress)
    : store_(store),
      ref_(std::move(ref)),
      manifest_(manifest),
      images_dir_(std::move(images_dir)),
      progress_fn_(std::move(progress)) {
  uint64_t total = manifest_.chunk_index->raw_bytes;
  for (const StreamInfo& s : manifest_.streams) total += s.raw_bytes;
  progress_ = std::make_unique<ProgressReporter>(progress_fn_, total);
}

Status DirectChunkUnpack::WaitForHeads() {
  const int n = static_cast<int>(manifest_.streams.size());
  std::string path = ref_.Path();
  StreamGroup group([&path](int i) { return fmt::format("stream-{} of {}", i, path); });
  CEDANA_RETURN_IF_ERROR(Fail(group.Run(n, [&](int i) {
    return UnpackStream(i, store_, ref_, manifest_, images_dir_, progress_.get(), group, {});
  })));
  CEDANA_ASSIGN_OR_RETURN(index_, ReadVerifiedIndex(store_, ref_, *manifest_.chunk_index));
  return OkStatus();
}

Status DirectChunkUnpack::CompleteImagesDir() {
  const int threads = std::max<int>(2, static_cast<int>(manifest_.streams.size()));
  return Fail(
      UnpackChunks(store_, ref_, manifest_, images_dir_, threads, progress_.get(), nullptr));
}

Status DirectChunkUnpack::Finish() {
  progress_->Finish();
  std::lock_guard lock(mu_);
  return failure_;
}

void DirectChunkUnpack::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
}

Status DirectChunkUnpack::Failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

Status DirectChunkUnpack::Fail(Status s) {
  std::lock_guard lock(mu_);
  if (!s.ok() && failure_.ok() && !cancelled_) failure_ = s;
  return s;
}

bool DirectChunkUnpack::Stopped() const {
  std::lock_guard lock(mu_);
  return cancelled_ || !failure_.ok();
}

const ChunkedFile* DirectChunkUnpack::PagesFile(const std::string& name) const {
  for (const ChunkedFile& f : index_.files)
    if (f.name == name) return &f;
  return nullptr;
}

Result<bool> DirectChunkUnpack::Has(const std::string& name) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image name \"" + name + "\" is not a file name");
  if (PagesFile(name) != nullptr) return true;
  struct stat st {};
  return ::lstat((images_dir_ + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status DirectChunkUnpack::SendChunks(const ChunkedFile& file, int pipe_fd) {
  std::deque<std::future<Result<std::string>>> ahead;
  size_t next = 0;
  for (size_t sent = 0; sent < file.chunks.size(); ++sent) {
    // The threads inherit this thread's file-system identity (the store's owner).
    while (next < file.chunks.size() && ahead.size() <= kChunksAhead) {
      const ChunkEntry* chunk = &file.chunks[next++];
      ahead.push_back(std::async(std::launch::async, [this, chunk] {
        return ReadVerifiedChunk(store_, ref_, *chunk, manifest_.digest);
      }));
    }
    Result<std::string> raw = ahead.front().get();
    ahead.pop_front();
    // Nothing of a chunk reaches CRIU before it matched its digest.
    if (!raw.has_value()) return Fail(raw.error()).WithContext("sending " + file.name);
    CEDANA_RETURN_IF_ERROR(WriteToCriu(pipe_fd, *raw, file.name, [this] { return Stopped(); }));
    progress_->Add(raw->size());
  }
  return OkStatus();
}

Status DirectChunkUnpack::Send(const std::string& name, int pipe_fd) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image name \"" + name + "\" is not a file name");
  CEDANA_RETURN_IF_ERROR(PrepareCriuPipe(pipe_fd, name));
  if (const ChunkedFile* pages = PagesFile(name)) return SendChunks(*pages, pipe_fd);

  // Every other image was unpacked and verified by WaitForHeads.
  return SendImageFileToCriu(pipe_fd, images_dir_, name, [this] { return Stopped(); });
}

}  // namespace cedana::image
