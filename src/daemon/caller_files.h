// Files the daemon (root) opens on a user's behalf: output files, the SLURM batch script kept
// with a checkpoint. They are opened with the user's file-system identity (setfsuid/setfsgid,
// which are per thread) and without following a symlink in the last component, so a user can
// never make root read or write a file that user could not. Root callers are unaffected.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace cedana::daemon {

// Switches this thread's file-system uid/gid to uid/gid until destroyed (no-op for uid 0).
class AsFileUser {
 public:
  AsFileUser(uid_t uid, gid_t gid);
  ~AsFileUser();
  AsFileUser(const AsFileUser&) = delete;
  AsFileUser& operator=(const AsFileUser&) = delete;

 private:
  bool switched_ = false;
};

// Opens (creating with mode 0600, appending) an output file as uid/gid: a regular file, or
// whatever else a job's output may be (/dev/null, a terminal, a named FIFO with a reader), which
// never becomes the caller's controlling terminal. kPermissionDenied when that user may not,
// kInvalidArgument for a relative path or a symlink, kFailedPrecondition for a FIFO nobody reads.
Result<UniqueFd> OpenOutputAs(const std::string& path, uid_t uid, gid_t gid);

// Mode of an output file the daemon creates: only its owner reads a job's output.
inline constexpr mode_t kOutputFileMode = 0600;
Result<UniqueFd> OpenOutputAs(const std::string& path, uid_t uid, gid_t gid);

// Reads a file as uid/gid (up to max_bytes; larger is kFailedPrecondition).
Result<std::string> ReadFileAs(const std::string& path, uid_t uid, gid_t gid, size_t max_bytes);

// A SLURM batch script path as slurmd lays it out: <spool dir>/job<digits>/slurm_script.
bool IsSlurmScriptPath(const std::string& path);

}  // namespace cedana::daemon
