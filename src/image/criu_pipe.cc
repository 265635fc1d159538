#include "image/criu_pipe.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/unique_fd.h"

namespace cedana::image {
namespace {

constexpr int kPipeBytes = 1 << 20;  // fewer wake-ups of CRIU than the default 64 KiB

// After a write that moved nothing: an error for what errno says, or OK once the pipe may take
// more (or 200 ms passed) and the restore goes on.
Status WaitForCriu(int pipe_fd, const std::string& name, const std::function<bool()>& stopped) {
  if (errno == EINTR) return OkStatus();
  if (errno == EPIPE) return AbortedError("criu closed " + name + " before its end");
  if (errno != EAGAIN) return ErrnoStatus(errno, "sending " + name + " to criu");
  pollfd p{pipe_fd, POLLOUT, 0};
  ::poll(&p, 1, 200);
  if (stopped()) return AbortedError("restore stopped while sending " + name);
  return OkStatus();
}

}  // namespace

Status PrepareCriuPipe(int pipe_fd, const std::string& name) {
  int flags = ::fcntl(pipe_fd, F_GETFL);
  if (flags < 0 || ::fcntl(pipe_fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return ErrnoStatus(errno, "setting up the pipe for " + name);
  (void)::fcntl(pipe_fd, F_SETPIPE_SZ, kPipeBytes);
  return OkStatus();
}

Status SendFileToCriu(int pipe_fd, int file_fd, off_t* offset, uint64_t end,
                      const std::string& name, const std::function<bool()>& stopped) {
  while (static_cast<uint64_t>(*offset) < end) {
    ssize_t n = ::sendfile(pipe_fd, file_fd, offset, end - static_cast<uint64_t>(*offset));
    if (n > 0) continue;
    if (n == 0) return AbortedError(name + " shrank while it was sent");
    CEDANA_RETURN_IF_ERROR(WaitForCriu(pipe_fd, name, stopped));
  }
  return OkStatus();
}

Status SendImageFileToCriu(int pipe_fd, const std::string& images_dir, const std::string& name,
                           const std::function<bool()>& stopped) {
  std::string path = images_dir + "/" + name;
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!file.valid()) return ErrnoStatus(errno, "opening " + path);
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  off_t sent = 0;
  return SendFileToCriu(pipe_fd, file.get(), &sent, static_cast<uint64_t>(st.st_size), name,
                        stopped);
}

uint64_t ReadByCriu(int pipe_fd, uint64_t written) {
  int unread = 0;
  if (::ioctl(pipe_fd, FIONREAD, &unread) != 0 || unread < 0) return 0;
  return written - std::min<uint64_t>(written, static_cast<uint64_t>(unread));
}

Status WriteToCriu(int pipe_fd, std::string_view data, const std::string& name,
                   const std::function<bool()>& stopped) {
  while (!data.empty()) {
    ssize_t n = ::write(pipe_fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    CEDANA_RETURN_IF_ERROR(WaitForCriu(pipe_fd, name, stopped));
  }
  return OkStatus();
}

}  // namespace cedana::image
