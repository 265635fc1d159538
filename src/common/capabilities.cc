#include "common/capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace cedana {
namespace {

constexpr const char* kXattr = "security.capability";

const char* CapabilityName(int cap) {
  switch (cap) {
    case 2: return "CAP_DAC_READ_SEARCH";
    case 19: return "CAP_SYS_PTRACE";
    case 40: return "CAP_CHECKPOINT_RESTORE";
    default: return nullptr;
  }
}

}  // namespace

std::string CapabilityNames(uint64_t mask) {
  std::string out;
  for (int cap = 0; cap < 64; ++cap) {
    if (!(mask & (uint64_t{1} << cap))) continue;
    const char* name = CapabilityName(cap);
    out += (out.empty() ? "" : ",") + (name ? std::string(name) : fmt::format("cap{}", cap));
  }
  return out;
}

Result<uint64_t> FileCapabilities(const std::string& path) {
  // Revision 2 is 20 bytes, revision 3 adds the root uid of a user namespace (24 bytes).
  vfs_ns_cap_data data{};
  ssize_t n = ::getxattr(path.c_str(), kXattr, &data, sizeof data);
  if (n < 0) {
    if (errno == ENODATA || errno == ENOTSUP) return uint64_t{0};
    return ErrnoStatus(errno, "reading the file capabilities of " + path);
  }
  uint32_t revision = data.magic_etc & VFS_CAP_REVISION_MASK;
  if (revision == VFS_CAP_REVISION_1 && n >= static_cast<ssize_t>(XATTR_CAPS_SZ_1))
    return uint64_t{data.data[0].permitted};
  if ((revision == VFS_CAP_REVISION_2 || revision == VFS_CAP_REVISION_3) &&
      n >= static_cast<ssize_t>(XATTR_CAPS_SZ_2))
    return uint64_t{data.data[0].permitted} | (uint64_t{data.data[1].permitted} << 32);
  return FailedPreconditionError(fmt::format(
      "{} has file capabilities of an unknown format (revision {:#x})", path, revision));
}

Status SetFileCapabilities(const std::string& path, uint64_t mask) {
  vfs_cap_data data{};
  data.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
  // +eip as the seeds write it: permitted, inheritable, and the effective flag.
  data.data[0].permitted = data.data[0].inheritable = static_cast<uint32_t>(mask);
  data.data[1].permitted = data.data[1].inheritable = static_cast<uint32_t>(mask >> 32);
  if (::setxattr(path.c_str(), kXattr, &data, XATTR_CAPS_SZ_2, 0) != 0)
    return ErrnoStatus(errno, fmt::format("setcap {}+eip {}", CapabilityNames(mask), path));
  return OkStatus();
}

Status RemoveFileCapabilities(const std::string& path) {
  if (::removexattr(path.c_str(), kXattr) != 0 && errno != ENODATA)
    return ErrnoStatus(errno, "removing the file capabilities of " + path);
  return OkStatus();
}

void DropProcessCapabilities() {
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  // Root keeps its uid-0 powers either way; for everyone else this leaves nothing.
  if (::getuid() == 0) return;
  ::syscall(SYS_capset, &header, data);
  // An exec that gained file capabilities left the process non-dumpable, which makes its own
  // /proc/self files root's (cedana-slurm reads /proc/self/environ). With nothing privileged
  // left, it may be an ordinary process again.
  ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

}  // namespace cedana
