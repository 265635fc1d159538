// Descriptor plumbing shared by the supervisor (a workload's pipes to its output files) and the
// task proxy (a step's pipes to slurmstepd's). Stateless; thread-safe.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace cedana {

// Copies what is readable from `from` to `to`; false at end of stream. What `to` no longer
// takes (a full disk, a reader gone) is dropped, so that `from` keeps draining.
inline bool RelayAvailable(int from, int to) {
  char buf[65536];
  ssize_t n = ::read(from, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = ::write(to, buf + off, n - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return true;
    }
    off += w;
  }
  return true;
}

// The inode of what `fd` is open on (a pipe's: CRIU's inherit-fd key); 0 if fstat fails.
inline uint64_t InodeOf(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

}  // namespace cedana
