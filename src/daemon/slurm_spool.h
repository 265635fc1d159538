// SlurmSpool: where slurmd keeps a batch job's script, and writing a checkpointed script back
// there. bash holds its batch script open, so a checkpoint of a SLURM job carries the script and a
// resubmitted job (new id, no file at the old path) needs it put back for CRIU to reopen. Root
// writes it, so the place is not taken from the checkpoint alone: it must be exactly slurmd's
// layout for the dumped job under the configured SlurmdSpoolDir, reached without any symlink.
// Stateless functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/result.h"

namespace cedana::daemon {

// SlurmdSpoolDir from slurm.conf's text, with %n (node name) and %h (host name) expanded as
// slurmd does; SLURM's default /var/spool/slurmd when the key is absent.
std::string SlurmdSpoolDir(std::string_view slurm_conf, const std::string& node_name,
                           const std::string& host_name);

// <spool_dir>/job<id, five digits at least>/slurm_script, as slurmstepd names it.
std::string SlurmScriptPath(const std::string& spool_dir, const std::string& job_id);

// Writes `data` (mode `mode` without setuid/setgid/sticky bits, owned by uid/gid) at `path`,
// which must be SlurmScriptPath(spool_dir, job_id); the job dir is made as slurmstepd makes it
// (0750, the owner's group) when missing. Every component of the spool dir and the job dir is
// opened without following symlinks, and the file is created exclusively.
// kInvalidArgument when `path` is anything else, kPermissionDenied when a component is a
// symlink, kAlreadyExists when the file exists; nothing is written then.
Status WriteSlurmScript(const std::string& spool_dir, const std::string& job_id,
                        const std::string& path, std::string_view data, mode_t mode, uid_t uid,
                        gid_t gid);

}  // namespace cedana::daemon
