// What a restore (Checkpointer::Restore, daemon/checkpointer.h) takes and gives. It finds a
// checkpoint (by id, or the newest good one of a label), verifies its MAC and every stream's
// checksum while unpacking into a local images dir (CRIU sees no byte that was not verified),
// and has a new supervisor restore it. With a label, a checkpoint that fails
// verification or restore is skipped and the next older one is tried; nothing is deleted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/phase_durations.h"
#include "common/result.h"
#include "daemon/node_context.h"

namespace cedana::daemon {

struct RestoreOptions {
  std::string checkpoint_id;  // this checkpoint, or
  std::string label;          // the newest good checkpoint of this label
  std::string dir;            // checkpoint dir; "" = configured
  std::string stdout_path;    // "" = where the dumped workload wrote (appended)
  std::string stderr_path;
  std::string job_id;
  uint32_t restart_count = 0;  // the SLURM job's restarts at this run
  pid_t owner_pid = 0;         // the SLURM job proxy, if any
  // The SLURM job's environment in this run: the srun steps the restored script starts, and
  // those resumed with it, get its SLURM_* variables (SrunEnvironment).
  std::vector<std::string> job_env;
  // Only the caller's own checkpoints, even for root: a job resumes its user's work only.
  bool callers_own_only = false;
};

struct RestoreOutcome {
  std::string workload_id;
  pid_t pid = 0;
  std::string checkpoint_id;
  int64_t checkpoint_duration_ms = 0;  // how long that checkpoint took to make
  int64_t checkpoint_created_at_ms = 0;
  std::string checkpoint_reason;  // "" for a checkpoint made before reasons
  std::string stdout_path;
  std::vector<std::string> skipped;  // "<id>: <why>" for each checkpoint that was passed over
  // How long each step of the restore that worked took, in order (ms): unpack (verifying and
  // unpacking the streams; a direct restore's heads only), prepare (the workload's record and
  // files), restore (CRIU, through the new supervisor), verify (a direct restore's rest).
  PhaseDurations phases_ms;
};

using RestoreProgress =
    std::function<void(const std::string& phase, uint64_t done, uint64_t total)>;

}  // namespace cedana::daemon
