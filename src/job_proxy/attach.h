// The job proxy: what a CEDANA_ENABLE=1 batch step runs instead of its script (the SPANK
// plugin puts `cedana-slurm` in argv[0]). It asks the node daemon to restore the newest good
// checkpoint of the job's label, or to start the script as a managed workload, then stands in
// for it: it relays its exit status, and turns a preemption (polled through libslurm), a
// SIGTERM (scancel, end of grace time) or SIGUSR1 (preempt_send_user_signal) into a checkpoint.
// If the daemon cannot be reached the proxy execs the script itself: the job always runs.
#pragma once

#include <string>
#include <vector>

namespace cedana::job_proxy {

// argv: the job's original command. Returns the exit code (or does not return: exec).
int RunAttach(const std::vector<std::string>& argv);

}  // namespace cedana::job_proxy
