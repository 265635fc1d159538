// ImagesDirFollower: pages images -> a StreamingPack while CRIU writes them.
#include "image/images_dir_follower.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "common/fs.h"

namespace cedana::image {
namespace {

// How often the dir and the followed files are looked at again once everything was read.
constexpr std::chrono::milliseconds kPoll{10};
constexpr size_t kReadBytes = 1 << 20;

bool IsPagesImage(const std::string& name) {
  return name.rfind("pages-", 0) == 0 && name.size() > 10 &&
         name.compare(name.size() - 4, 4, ".img") == 0;
}

// A regular file of the dir, never a link or a FIFO planted there (in unprivileged mode the
// job's owner can write into the images dir).
Result<UniqueFd> OpenRegular(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) return ErrnoStatus(errno, "opening " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return FailedPreconditionError(path + " is not a regular file");
  return fd;
}

}  // namespace

std::unique_ptr<ImagesDirFollower> ImagesDirFollower::Start(std::string images_dir,
                                                            StreamingPack* pack, bool background) {
  std::unique_ptr<ImagesDirFollower> f(new ImagesDirFollower(std::move(images_dir), pack));
  f->buf_.resize(kReadBytes);
  f->thread_ = std::thread([p = f.get(), background] { p->Run(background); });
  return f;
}

ImagesDirFollower::~ImagesDirFollower() { Stop(); }

void ImagesDirFollower::Run(bool background) {
  if (background) (void)::setpriority(PRIO_PROCESS, 0, 19);  // this thread only (Linux)
  while (!stop_.load()) {
    thread_status_ = Pass();
    if (!thread_status_.ok()) return;
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, kPoll, [&] { return stop_.load(); });
  }
}

Status ImagesDirFollower::Pass() {
  CEDANA_ASSIGN_OR_RETURN(auto names, fs::ListDir(dir_));
  for (const std::string& name : names) {
    if (!IsPagesImage(name) || seen_.count(name) != 0) continue;
    CEDANA_ASSIGN_OR_RETURN(UniqueFd fd, OpenRegular(dir_ + "/" + name));
    CEDANA_ASSIGN_OR_RETURN(int handle, pack_->OpenFile(name));
    seen_.insert(name);
    files_.push_back(Followed{name, std::move(fd), handle});
  }
  for (Followed& f : files_) CEDANA_RETURN_IF_ERROR(ReadToEnd(f, /*until_stopped=*/true));
  return OkStatus();
}

// Everything below the file's size now: CRIU appends, and the kernel raises the size only past
// bytes already written, so what is read here is final.
Status ImagesDirFollower::ReadToEnd(Followed& f, bool until_stopped) {
  for (;;) {
    ssize_t n = ::read(f.fd.get(), buf_.data(), buf_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "reading " + dir_ + "/" + f.name);
    if (n == 0) return OkStatus();
    CEDANA_RETURN_IF_ERROR(pack_->Append(f.handle, buf_.data(), static_cast<size_t>(n)));
    bytes_ += static_cast<uint64_t>(n);
    if (until_stopped && stop_.load()) return OkStatus();
  }
}

Status ImagesDirFollower::AddWhole(const std::string& name) {
  CEDANA_ASSIGN_OR_RETURN(int handle, pack_->OpenFile(name));
  Followed f{name, {}, handle};
  CEDANA_ASSIGN_OR_RETURN(f.fd, OpenRegular(dir_ + "/" + name));
  CEDANA_RETURN_IF_ERROR(ReadToEnd(f, false));
  return pack_->CloseFile(handle);
}

Status ImagesDirFollower::Complete() {
  if (!thread_.joinable()) return FailedPreconditionError("images dir follower already stopped");
  stop_ = true;
  wake_.notify_all();
  thread_.join();
  CEDANA_RETURN_IF_ERROR(thread_status_) << "packing " << dir_ << " while CRIU dumped";
  bytes_while_dumping_ = bytes_;
  for (Followed& f : files_) {
    CEDANA_RETURN_IF_ERROR(ReadToEnd(f, false));
    CEDANA_RETURN_IF_ERROR(pack_->CloseFile(f.handle));
    f.fd.Reset();
  }
  CEDANA_ASSIGN_OR_RETURN(auto names, fs::ListDir(dir_));
  std::sort(names.begin(), names.end());
  // CRIU's images dir holds only regular files: anything else was put there by someone else.
  for (const std::string& name : names) {
    if (seen_.count(name) == 0) CEDANA_RETURN_IF_ERROR(AddWhole(name));
  }
  return OkStatus();
}

void ImagesDirFollower::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  pack_->Cancel();  // the thread may wait for the pack's memory
  wake_.notify_all();
  thread_.join();
}

}  // namespace cedana::image
