#include "common/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/unique_fd.h"

namespace cedana::fs {

Result<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "opening " + path);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "reading " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status FsyncPath(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "opening " + path);
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, "fsync " + path);
  return OkStatus();
}

Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode,
                       Durability durability) {
  const bool sync = durability == Durability::kOnDisk;
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd.valid()) return ErrnoStatus(errno, "creating " + tmp);
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        Status s = ErrnoStatus(errno, "writing " + tmp);
        ::unlink(tmp.c_str());
        return s;
      }
      off += static_cast<size_t>(n);
    }
    if (sync && ::fsync(fd.get()) != 0) {
      Status s = ErrnoStatus(errno, "fsync " + tmp);
      ::unlink(tmp.c_str());
      return s;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoStatus(errno, "renaming " + tmp + " to " + path);
    ::unlink(tmp.c_str());
    return s;
  }
  if (!sync) return OkStatus();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return FsyncPath(dir.empty() ? "." : dir);
}

Status MakeDirs(const std::string& path, mode_t mode) {
  // The missing directories, outermost first: only those get `mode` (an existing one, an
  // admin's checkpoint dir or /etc/cedana, keeps the mode it has).
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (std::filesystem::path p = std::filesystem::path(path).lexically_normal();
       !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), mode) == 0) ::chmod(it->c_str(), mode);  // not narrowed by the umask
    else if (errno != EEXIST) return ErrnoStatus(errno, "creating directory " + it->string());
  }
  if (!std::filesystem::is_directory(path, ec))
    return FailedPreconditionError(path + " is not a directory");
  return OkStatus();
}

Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return ErrnoStatus(ec.value(), "removing " + path);
  return OkStatus();
}

Result<std::vector<std::string>> ListDir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "listing " + path);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsInMemoryFileSystem(const std::string& path) {
  struct statfs st {};
  return ::statfs(path.c_str(), &st) == 0 && (st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC);
}

Result<uint64_t> TreeSize(const std::string& path) {
  std::error_code ec;
  uint64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  if (ec) return ErrnoStatus(ec.value(), "measuring " + path);
  return total;
}

int OpenNoSymlinks(int dir, const std::string& rel, int flags, bool beneath) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (beneath ? RESOLVE_BENEATH : 0);
  return static_cast<int>(::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof how));
}

}  // namespace cedana::fs
