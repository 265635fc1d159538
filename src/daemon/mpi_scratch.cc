#include "daemon/mpi_scratch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

namespace cedana::daemon {
namespace {

constexpr const char* kOpenMpiVars[] = {"OMPI_MCA_orte_tmpdir_base",
                                        "OMPI_MCA_btl_vader_backing_directory"};
// OpenMPI's posix shmem component, when mpirun asks it whether it works, leaves a deleted
// /dev/shm/open_mpi.0000 open in mpirun, inherited by every rank. Each job's checkpoint then
// holds that file as a CRIU ghost file, and a restore recreates it at one fixed path,
// /dev/shm/open_mpi.0000.cr.1.ghost: two OpenMPI jobs restored at once collided there (one
// failed with "Can't create ghost regfile: File exists"). Not asked, posix is never opened;
// OpenMPI picks mmap (priority 50, above posix's) whether or not posix is there.
constexpr const char* kOpenMpiShmem = "OMPI_MCA_shmem";
constexpr const char* kWithoutPosixShmem = "^posix";

bool Sets(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

}  // namespace

std::string MpiScratchDirFor(const std::string& workload_id) {
  return "/dev/shm/cedana-mpi-" + workload_id;
}

bool IsMpiScratchDir(const std::string& path) {
  const std::string prefix = MpiScratchDirFor("wl-");
  if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size()) return false;
  return std::all_of(path.begin() + prefix.size(), path.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

std::vector<std::string> AddMpiScratchEnv(std::vector<std::string>* env, const std::string& dir) {
  std::vector<std::string> added;
  // Both or neither: a job that placed one of them knows where it wants OpenMPI's files.
  if (std::none_of(std::begin(kOpenMpiVars), std::end(kOpenMpiVars),
                   [&](const char* v) { return Sets(*env, v); })) {
    for (const char* v : kOpenMpiVars) {
      env->push_back(std::string(v) + "=" + dir);
      added.push_back(v);
    }
  }
  if (!Sets(*env, kOpenMpiShmem)) {
    env->push_back(std::string(kOpenMpiShmem) + "=" + kWithoutPosixShmem);
    added.push_back(kOpenMpiShmem);
  }
  return added;
}

Status PrepareMpiScratch(const std::string& dir, uid_t uid, gid_t gid) {
  if (::mkdir(dir.c_str(), 0700) == 0) {
    if (::chown(dir.c_str(), uid, gid) != 0) {
      const int err = errno;
      (void)::rmdir(dir.c_str());
      return ErrnoStatus(err, "giving " + dir + " to its workload's owner");
    }
    return OkStatus();
  }
  if (errno != EEXIST)
    return ErrnoStatus(errno, "making " + dir + " (OpenMPI's files of the workload)");
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "looking at " + dir);
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 07777) != 0700)
    return FailedPreconditionError(
        fmt::format("{} exists and is not the workload's own directory (a {} of uid {}, mode {:o}; "
                    "it must be a "
                    "directory of uid {}, mode 700): remove it",
                    dir, S_ISDIR(st.st_mode) ? "directory" : "non-directory", st.st_uid,
                    st.st_mode & 07777, uid));
  return OkStatus();
}

void RemoveMpiScratchIfEmpty(const std::string& dir) {
  if (!dir.empty()) (void)::rmdir(dir.c_str());
}

}  // namespace cedana::daemon
