#include "daemon/slurm_spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/unique_fd.h"
#include "slurm/slurm_conf_editor.h"

namespace cedana::daemon {
namespace {

constexpr std::string_view kDefaultSpoolDir = "/var/spool/slurmd";

void ReplaceAll(std::string* s, std::string_view from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size()))
    s->replace(at, from.size(), to);
}

// Opens `rel` (a directory) beneath `dir` with no symlink anywhere on the way.
Result<UniqueFd> OpenDirNoSymlinks(int dir, const std::string& rel, const std::string& shown) {
  UniqueFd fd(fs::OpenNoSymlinks(dir, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, false));
  if (fd.valid()) return fd;
  if (errno == ELOOP)
    return PermissionDeniedError(
        fmt::format("{} leads through a symlink; the batch script is not "
                    "written there",
                    shown));
  return ErrnoStatus(errno, "opening " + shown);
}

}  // namespace

std::string SlurmdSpoolDir(std::string_view slurm_conf, const std::string& node_name,
                           const std::string& host_name) {
  std::string dir = slurm::ReadConfKeyOr(slurm_conf, "SlurmdSpoolDir", kDefaultSpoolDir);
  ReplaceAll(&dir, "%h", host_name);
  ReplaceAll(&dir, "%n", node_name);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string SlurmScriptPath(const std::string& spool_dir, const std::string& job_id) {
  return fmt::format("{}/job{:0>5}/slurm_script", spool_dir, job_id);
}

Status WriteSlurmScript(const std::string& spool_dir, const std::string& job_id,
                        const std::string& path, std::string_view data, mode_t mode, uid_t uid,
                        gid_t gid) {
  bool digits = !job_id.empty() && job_id.size() <= 10 &&
                job_id.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || spool_dir.empty() || spool_dir[0] != '/' ||
      path != SlurmScriptPath(spool_dir, job_id))
    return InvalidArgumentError(
        fmt::format("the checkpoint keeps its batch script at {}, but slurmd keeps job {}'s at {}",
                    path, job_id, digits ? SlurmScriptPath(spool_dir, job_id) : "(no job id)"));
  std::string job_dir = fmt::format("job{:0>5}", job_id);
  CEDANA_ASSIGN_OR_RETURN(UniqueFd spool, OpenDirNoSymlinks(AT_FDCWD, spool_dir, spool_dir));
  if (::mkdirat(spool.get(), job_dir.c_str(), 0750) == 0) {
    if (::fchownat(spool.get(), job_dir.c_str(), static_cast<uid_t>(-1), gid,
                   AT_SYMLINK_NOFOLLOW) != 0) {
      // Root-squashed spool dirs refuse chown; the script stays reachable for root's restore.
    }
  } else if (errno != EEXIST) {
    return ErrnoStatus(errno, "creating " + spool_dir + "/" + job_dir);
  }
  CEDANA_ASSIGN_OR_RETURN(UniqueFd job,
                          OpenDirNoSymlinks(spool.get(), job_dir, spool_dir + "/" + job_dir));
  UniqueFd fd(::openat(job.get(), "slurm_script",
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return ErrnoStatus(errno, "writing the batch script back to " + path);
  if (::fchown(fd.get(), uid, gid) != 0) {
    // As above: the file stays readable for the restore.
  }
  if (::write(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size()) ||
      ::fchmod(fd.get(), mode & 0777) != 0)
    return ErrnoStatus(errno, "writing the batch script back to " + path);
  return OkStatus();
}

}  // namespace cedana::daemon
