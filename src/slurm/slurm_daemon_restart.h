// SlurmDaemonRestart: restarts slurmctld and slurmd on this node so they load a changed
// slurm.conf/plugstack.conf and new plugin files. Through systemd when the unit is active;
// otherwise from the daemon's pid file: SIGTERM, wait for exit, start again with the same argv,
// environment and working directory, detached. Blocks up to about 45 s per daemon. Not
// thread-safe (forks). Used by `cedana slurm setup/destroy` only, never inside SLURM.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace cedana::slurm {

struct SlurmDaemonFiles {
  std::string slurm_conf;          // passed to `scontrol ping` as SLURM_CONF
  std::string slurmctld_pid_file;  // SlurmctldPidFile
  std::string slurmd_pid_file;     // SlurmdPidFile
  // Each only when the node's role loads what changed (node_role.h): slurmctld the job_submit
  // and cli_filter plugins, slurmd the task plugin (the SPANK plugin is read per job).
  bool restart_slurmctld = true;
  bool restart_slurmd = true;
};

// Restarts slurmctld, then slurmd, each only if asked for and it runs here; appends one line per
// step to `log`. When neither runs, says so in `log` and does nothing. Errors: kDeadlineExceeded (a
// daemon did not stop within 15 s or did not come back within 30 s), kUnavailable
// (`systemctl restart` failed), errno-derived codes for fork/kill failures.
Status RestartSlurmDaemons(const SlurmDaemonFiles& files, std::vector<std::string>* log);

}  // namespace cedana::slurm
