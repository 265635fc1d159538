#include "image/direct_unpack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <tuple>

#include "common/checkpoint_streams.h"
#include "common/unique_fd.h"
#include "image/criu_pipe.h"
#include "image/tar.h"
#include "image/unpack_stream.h"

namespace cedana::image {
namespace {

// What CRIU has read is released from the images dir in steps of this many bytes at least: a
// punch takes the file's lock, which the streams' threads writing later parts wait for.
constexpr uint64_t kReleaseStepBytes = 16 << 20;

}  // namespace

// Follows one stream's extraction into the positions and pages maps.
class DirectUnpack::Follower : public ExtractObserver {
 public:
  Follower(DirectUnpack* owner, int index)
      : owner_(owner), index_(index), head_bytes_(owner->manifest_.streams[index].head.raw_bytes) {}

  // CRIU reads the head's images once they are verified, while the tail is still arriving and
  // is verified only at the stream's end: an entry there that is not memory pages could rewrite
  // an image CRIU already trusts (a core image's credentials). Only pages may follow the head.
  Status Admit(const TarEntryHeader& entry) override {
    if (entry.position < head_bytes_ || IsPagesImage(entry.file)) {
      entry_data_at_ = entry.position + kTarBlockSize;
      if (has_stored_file_ && IsPagesImage(entry.file)) return owner_->TakeTurn(index_, entry);
      return OkStatus();
    }
    return AbortedError(fmt::format(
        "stream-{}: {} comes after the stream's verified head, where only memory pages may be "
        "(the stored stream was altered)",
        index_, entry.file));
  }

  // Pages stay in the stored file when there is one (the stream is not compressed).
  bool LeavesInArchive(const std::string& file) override {
    return IsPagesImage(file) && has_stored_file_;
  }
  void StoredFile(UniqueFd fd) {
    has_stored_file_ = true;
    std::lock_guard<std::mutex> lock(owner_->mu_);
    owner_->stored_files_[index_] = std::move(fd);
  }

  void EntryStarted(const std::string& file, uint64_t offset) override {
    if (!IsPagesImage(file)) return;
    entry_offset_ = offset;
    std::lock_guard<std::mutex> lock(owner_->mu_);
    Position& p = owner_->positions_[index_];
    p.in_pages = true;
    p.file = file;
    Part part;
    if (has_stored_file_) {
      part.stream = index_;
      part.stored_at = entry_data_at_;
    }
    owner_->pages_[file].emplace(offset, part);
    owner_->changed_.notify_all();
  }
  void Wrote(const std::string& file, uint64_t, uint64_t size) override {
    if (!IsPagesImage(file)) return;
    std::lock_guard<std::mutex> lock(owner_->mu_);
    owner_->pages_[file][entry_offset_].bytes += size;
    owner_->changed_.notify_all();
  }

 private:
  DirectUnpack* owner_;
  int index_;
  uint64_t head_bytes_;
  bool has_stored_file_ = false;  // this stream's thread only
  uint64_t entry_offset_ = 0;
  uint64_t entry_data_at_ = 0;  // where the admitted entry's bytes start in the archive
};

DirectUnpack::DirectUnpack(const Manifest& manifest, std::string images_dir, ProgressFn progress)
    : manifest_(manifest),
      images_dir_(std::move(images_dir)),
      progress_fn_(std::move(progress)),
      group_([this](int i) { return fmt::format("stream-{} of {}", i, manifest_.id); }),
      heads_left_(static_cast<int>(manifest.streams.size())),
      positions_(manifest.streams.size()),
      stored_files_(manifest.streams.size()) {
  uint64_t total = 0;
  for (const StreamInfo& s : manifest_.streams) total += s.raw_bytes;
  progress_ = std::make_unique<ProgressReporter>(progress_fn_, total);
}

Result<std::unique_ptr<DirectUnpack>> DirectUnpack::Start(storage::CheckpointStore& store,
                                                          const storage::CheckpointRef& ref,
                                                          const Manifest& manifest,
                                                          const std::string& images_dir,
                                                          ProgressFn progress) {
  if (manifest.streams.empty()) return InvalidArgumentError("checkpoint has no streams");
  if (manifest.chunk_index)
    return FailedPreconditionError(fmt::format(
        "checkpoint {} is deduplicated: its pages are in chunks, which DirectChunkUnpack serves",
        manifest.id));
  for (const StreamInfo& s : manifest.streams)
    if (s.head.digest.empty())
      return FailedPreconditionError(fmt::format(
          "checkpoint {} was written without stream heads; it restores after a full unpack",
          manifest.id));
  std::unique_ptr<DirectUnpack> u(new DirectUnpack(manifest, images_dir, std::move(progress)));
  for (size_t i = 0; i < manifest.streams.size(); ++i)
    u->followers_.push_back(std::make_unique<Follower>(u.get(), static_cast<int>(i)));
  DirectUnpack* self = u.get();
  u->runner_ = std::thread([self, &store, ref] {
    int n = static_cast<int>(self->manifest_.streams.size());
    Status s = self->group_.Run(n, [&](int i) {
      Follower* f = self->followers_[i].get();
      StreamFollower follower{f,
                              [self] {
                                std::lock_guard<std::mutex> lock(self->mu_);
                                --self->heads_left_;
                                self->changed_.notify_all();
                              },
                              [f](UniqueFd fd) { f->StoredFile(std::move(fd)); }};
      Status r = UnpackStream(i, store, ref, self->manifest_, self->images_dir_,
                              self->progress_.get(), self->group_, follower);
      std::lock_guard<std::mutex> lock(self->mu_);
      self->positions_[i].finished = true;
      self->changed_.notify_all();
      return r;
    });
    if (s.ok()) self->progress_->Finish();
    std::lock_guard<std::mutex> lock(self->mu_);
    self->done_ = true;
    if (self->status_.ok()) self->status_ = s;
    self->changed_.notify_all();
  });
  return u;
}

DirectUnpack::~DirectUnpack() {
  Cancel();
  if (runner_.joinable()) runner_.join();
}

Status DirectUnpack::WaitForHeads() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return heads_left_ == 0 || done_ || cancelled_; });
  if (heads_left_ == 0) return OkStatus();
  if (cancelled_) return AbortedError("unpack cancelled");
  return status_.ok() ? InternalError("streams ended without their heads") : status_;
}

Status DirectUnpack::Finish() {
  if (runner_.joinable()) runner_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void DirectUnpack::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    cancelled_ = true;
    changed_.notify_all();
  }
  group_.Cancel();
}

Status DirectUnpack::Failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ && !cancelled_ ? status_ : OkStatus();
}

bool DirectUnpack::Stopped() const { return cancelled_ || (done_ && !status_.ok()); }

std::function<bool()> DirectUnpack::StopCheck() {
  return [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return Stopped();
  };
}

uint64_t DirectUnpack::ContiguousBytes(const std::string& file) const {
  auto it = pages_.find(file);
  if (it == pages_.end()) return 0;
  // Parts start where the previous one ends, so the prefix ends at the first part that is
  // missing or still being written (nothing starts at its current end).
  uint64_t end = 0;
  for (auto part = it->second.find(0); part != it->second.end() && part->second.bytes > 0;
       part = it->second.find(end))
    end += part->second.bytes;
  return end;
}

bool DirectUnpack::Complete(const std::string& file) const {
  // Each stream's pages come in order of file name: one that is past `file` brings no more.
  for (const Position& p : positions_)
    if (!p.finished && !(p.in_pages && p.file > file)) return false;
  return true;
}

Status DirectUnpack::TakeTurn(int stream, const TarEntryHeader& entry) {
  std::unique_lock<std::mutex> lock(mu_);
  Position& me = positions_[stream];
  me.in_pages = true;
  me.file = entry.file;
  me.offset = entry.part_offset.value_or(0);
  changed_.notify_all();
  changed_.wait(lock, [&] { return Stopped() || Turn(stream); });
  if (Stopped()) return AbortedError("unpack stopped");
  return OkStatus();
}

bool DirectUnpack::Turn(int stream) const {
  for (const Position& p : positions_)
    if (!p.finished && !p.in_pages) return false;  // heads first, as CRIU waits for them
  if (!EveryStreamStored()) return true;  // a compressed stream feeds CRIU: no order to keep
  const Position& me = positions_[stream];
  for (const Position& p : positions_)
    if (!p.finished && std::tie(p.file, p.offset) < std::tie(me.file, me.offset)) return false;
  return true;
}

Result<bool> DirectUnpack::Has(const std::string& name) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image name \"" + name + "\" is not a file name");
  if (!IsPagesImage(name)) {
    struct stat st {};
    return ::lstat((images_dir_ + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }
  // Read in place, a pages image is where the stored headers say, whenever the streams' threads
  // get there (in image order, see TakeTurn).
  if (AllPagesInPlace() && Listing().ok()) return stored_pages_.count(name) > 0;
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return pages_.count(name) > 0 || Complete(name) || Stopped(); });
  if (pages_.count(name) > 0) return true;
  if (Stopped()) return AbortedError("unpack stopped");
  return false;
}

Status DirectUnpack::Send(const std::string& name, int pipe_fd) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image name \"" + name + "\" is not a file name");
  CEDANA_RETURN_IF_ERROR(PrepareCriuPipe(pipe_fd, name));
  if (!IsPagesImage(name))  // written whole with the heads
    return SendImageFileToCriu(pipe_fd, images_dir_, name, StopCheck());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sent_pages_.insert(name).second)
      return FailedPreconditionError(
          name + " was sent to CRIU before; what CRIU read of it is no longer in the images dir");
  }
  ImagesDirCopy copy;
  uint64_t sent = 0;
  for (;;) {
    uint64_t ready = 0;
    bool complete = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock,
                    [&] { return ContiguousBytes(name) > sent || Complete(name) || Stopped(); });
      if (Stopped()) return AbortedError("unpack stopped while sending " + name);
      complete = Complete(name);
      ready = ContiguousBytes(name);
    }
    CEDANA_RETURN_IF_ERROR(SendPages(name, pipe_fd, &sent, ready, &copy));
    if (complete) return OkStatus();
  }
}

// A file per stream at most.
static_assert(kMaxCheckpointStreams <= kCriuInPlaceMaxFiles);

Result<std::optional<InPlaceImage>> DirectUnpack::InPlace(const std::string& name) {
  if (!IsPagesImage(name) || !AllPagesInPlace()) return std::optional<InPlaceImage>();
  CEDANA_RETURN_IF_ERROR(Listing());
  auto it = stored_pages_.find(name);
  if (it == stored_pages_.end() || conflicting_.count(name) > 0)
    return std::optional<InPlaceImage>();
  InPlaceImage image;
  std::map<int, size_t> file_of_stream;
  uint64_t next = 0;
  for (const auto& [offset, part] : it->second) {
    // Parts that leave a gap or overlap: the stored streams were altered (their hashes will say
    // so); the pipe serves what the streams' threads read.
    if (offset != next) return std::optional<InPlaceImage>();
    next += part.bytes;
    if (part.bytes == 0) continue;
    auto [file, added] = file_of_stream.emplace(part.stream, image.files.size());
    if (added) {
      CEDANA_ASSIGN_OR_RETURN(UniqueFd fd, OpenStoredFileAgain(part.stream));
      image.files.push_back(std::move(fd));
    }
    image.runs.push_back(StoredRun{file->second, part.at, part.bytes});
  }
  if (image.runs.empty()) return std::optional<InPlaceImage>();
  return std::optional(std::move(image));
}

Status DirectUnpack::Listing() {
  std::call_once(listed_, [this] { listing_ = ListStoredPages(); });
  return listing_;
}

Status DirectUnpack::ListStoredPages() {
  std::vector<int> files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const UniqueFd& f : stored_files_) files.push_back(f.get());
  }
  for (size_t stream = 0; stream < files.size(); ++stream) {
    auto entries = ListTarEntries(files[stream]);
    if (!entries.has_value())
      return entries.error().WithContext(fmt::format("listing stream-{}", stream));
    for (const TarListedEntry& e : *entries) {
      if (!IsPagesImage(e.header.file)) continue;
      StoredPart part{static_cast<int>(stream), e.header.position + kTarBlockSize, e.size};
      if (!stored_pages_[e.header.file].emplace(e.header.part_offset.value_or(0), part).second)
        conflicting_.insert(e.header.file);
    }
  }
  return OkStatus();
}

Result<UniqueFd> DirectUnpack::OpenStoredFileAgain(int stream) {
  int stored = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stored = stored_files_[stream].get();
  }
  // Its own open file description: the stream's thread reads on through the one it has. The
  // stored file stays open until destruction, so its fd is still this one.
  std::string path = fmt::format("/proc/self/fd/{}", stored);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, fmt::format("opening stream-{} again", stream));
  return fd;
}

bool DirectUnpack::EveryStreamStored() const {
  return std::all_of(stored_files_.begin(), stored_files_.end(),
                     [](const UniqueFd& f) { return f.valid(); });
}

bool DirectUnpack::AllPagesInPlace() const {
  std::lock_guard<std::mutex> lock(mu_);
  return EveryStreamStored();
}

Status DirectUnpack::SendPages(const std::string& name, int pipe_fd, uint64_t* sent, uint64_t end,
                               ImagesDirCopy* copy) {
  while (*sent < end) {
    uint64_t part_offset = 0;
    Part part;
    int fd = -1;
    {
      // Parts below `end` have arrived whole and no longer change.
      std::lock_guard<std::mutex> lock(mu_);
      const auto& parts = pages_.at(name);
      auto it = std::prev(parts.upper_bound(*sent));
      part_offset = it->first;
      part = it->second;
      if (part.stream >= 0) fd = stored_files_[part.stream].get();
    }
    if (fd < 0) {
      if (!copy->fd.valid()) {
        // Written by the streams' threads with the same file-system identity as this open.
        std::string path = images_dir_ + "/" + name;
        copy->fd.Reset(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
        if (!copy->fd.valid()) return ErrnoStatus(errno, "opening " + path);
      }
      fd = copy->fd.get();
    }
    // From *sent up to the part's end: at the same offset in the images dir's file, or that
    // far into the part's bytes in the stored file.
    const uint64_t upto = std::min(end, part_offset + part.bytes);
    const uint64_t at = part.stream >= 0 ? part.stored_at + (*sent - part_offset) : *sent;
    off_t from = static_cast<off_t>(at);
    CEDANA_RETURN_IF_ERROR(
        SendFileToCriu(pipe_fd, fd, &from, at + (upto - *sent), name, StopCheck()));
    *sent = upto;
    ReleaseWhatCriuRead(pipe_fd, *sent, copy);
  }
  return OkStatus();
}

void DirectUnpack::ReleaseWhatCriuRead(int pipe_fd, uint64_t sent, ImagesDirCopy* copy) {
  if (!copy->fd.valid() || !copy->can_release) return;
  constexpr uint64_t kPage = 4096;
  const uint64_t read = ReadByCriu(pipe_fd, sent) / kPage * kPage;
  if (read < copy->released + kReleaseStepBytes) return;
  // Ranges of parts left in a stored file are holes in this file: punching them changes nothing.
  if (::fallocate(copy->fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(copy->released),
                  static_cast<off_t>(read - copy->released)) != 0) {
    copy->can_release = false;  // a file system without holes keeps the copy, as before
    return;
  }
  copy->released = read;
}

}  // namespace cedana::image
