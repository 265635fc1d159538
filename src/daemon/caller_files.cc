#include "daemon/caller_files.h"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include <regex>

namespace cedana::daemon {

AsFileUser::AsFileUser(uid_t uid, gid_t gid) {
  if (uid == 0) return;
  ::setfsgid(gid);
  ::setfsuid(uid);
  switched_ = true;
}

AsFileUser::~AsFileUser() {
  if (!switched_) return;
  ::setfsuid(0);
  ::setfsgid(0);
}

Result<UniqueFd> OpenOutputAs(const std::string& path, uid_t uid, gid_t gid) {
  if (path.empty() || path[0] != '/')
    return InvalidArgumentError("output file \"" + path + "\" must be an absolute path");
  AsFileUser as(uid, gid);
  // O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader forever.
  UniqueFd fd(::open(path.c_str(),
                     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
                     kOutputFileMode));
  if (!fd.valid()) {
    if (errno == ELOOP) return InvalidArgumentError("output file " + path + " is a symlink");
    if (errno == ENXIO)
      return FailedPreconditionError("output " + path + " is a FIFO that nobody reads");
    return ErrnoStatus(errno, "opening output file " + path);
  }
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return ErrnoStatus(errno, "making output " + path + " blocking");
  return fd;
}

Result<std::string> ReadFileAs(const std::string& path, uid_t uid, gid_t gid, size_t max_bytes) {
  AsFileUser as(uid, gid);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return ErrnoStatus(errno, "opening " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + " is not a regular file");
  if (static_cast<size_t>(st.st_size) > max_bytes)
    return FailedPreconditionError(path + " is larger than " + std::to_string(max_bytes) +
                                   " bytes");
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::read(fd.get(), data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  data.resize(off);
  return data;
}

bool IsSlurmScriptPath(const std::string& path) {
  static const std::regex kScript(R"(^(/[A-Za-z0-9._-]+)+/job[0-9]+/slurm_script$)");
  return path.find("/../") == std::string::npos && path.find("/./") == std::string::npos &&
         std::regex_match(path, kScript);
}

}  // namespace cedana::daemon
