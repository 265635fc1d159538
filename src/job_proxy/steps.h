// What cedana-slurm is for the srun steps of an enabled job (docs/architecture.md, "srun steps";
// the node daemon's side is daemon/srun_steps.h).
//
// - The srun relay: the `srun` first in the batch script's PATH. It asks the node daemon to run
//   the real srun outside the job's processes with its stdio, then becomes a waiter: /bin/sh
//   reading srun's exit status from a pipe and exiting with it. What stays in the batch script's
//   tree is a shell and a pipe, which a checkpoint includes.
// - The task proxy: what spank/cedana makes each task of such a step. The node daemon starts the
//   task's command inside the job's processes (a keeper); the proxy relays its stdio between the
//   keeper's pipes and slurmstepd's, and exits with the task's exit status. After a restore the
//   proxies of the new step attach to the restored keepers instead.
// Either falls back to running the real srun or the task itself when the node daemon cannot
// take the step: the job always runs.
#pragma once

#include <string>
#include <vector>

namespace cedana::job_proxy {

// argv as srun got it. Does not return (exec).
[[noreturn]] void RunSrunRelay(const std::vector<std::string>& argv);

// argv: the task's command. Returns the task's exit code (or does not return: exec).
int RunStepTask(const std::vector<std::string>& argv);

}  // namespace cedana::job_proxy
