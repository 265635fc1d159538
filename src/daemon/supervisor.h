// Supervisor: one small process per workload, in the spirit of containerd-shim/conmon. It is
// detached from the node daemon (double fork, own session), so restarting or upgrading the
// daemon neither kills nor orphans workloads. It starts the workload as the init of a new PID
// namespace (in unprivileged mode: in the node's, see StartWorkload) or has CRIU restore it as
// its direct child, relays the workload's stdout/stderr
// pipes to the output files, reaps it, and records its state in state.json.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/result.h"
#include "daemon/workload.h"

namespace cedana::daemon {

struct SupervisorStarted {
  pid_t pid = 0;  // the workload's init, host pid
  pid_t supervisor_pid = 0;
};

// Daemon side: starts the supervisor for the workload recorded in `records` (spec.json must
// exist) and waits until it reports that the workload runs (or why it could not start), up to
// `timeout`. The supervisor runs `self_exe supervisor --dir <workload dir> --report-fd N`.
Result<SupervisorStarted> LaunchSupervisor(const WorkloadRecords& records, const std::string& id,
                                           const std::string& self_exe, int timeout_seconds);

// Supervisor side: the body of `cedana supervisor`. Returns the process exit code.
int RunSupervisor(const std::string& workload_dir, int report_fd);

}  // namespace cedana::daemon
