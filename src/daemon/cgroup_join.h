// Cgroup joining: puts a workload into the cgroups of another process (the SLURM job proxy),
// so that under proctrack/cgroup the workload is accounted and limited with its job, and the
// job's final SIGKILL reaches it. Works with cgroup v1 (one hierarchy per controller, as
// SLURM 22.05 uses) and v2. Stateless; thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::daemon {

// The cgroup.procs files of `pid`'s non-root cgroups, read from /proc/<pid>/cgroup.
std::vector<std::string> CgroupProcsFilesOf(pid_t pid,
                                            const std::string& cgroup_root = "/sys/fs/cgroup");

// Moves every process in `pids` into each of `procs_files`. Returns how many moves failed
// (a vanished process, a controller not mounted); the first failure is in *first_error.
int JoinCgroups(const std::vector<std::string>& procs_files, const std::vector<pid_t>& pids,
                std::string* first_error);

}  // namespace cedana::daemon
