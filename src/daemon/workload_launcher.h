// WorkloadLauncher: starts the supervisor of a recorded workload (daemon/supervisor.h), which
// runs it or has CRIU restore it, and reports its pids. An interface so that the checkpoint
// core's restore steps can be unit-tested with a launcher that fails where a test says
// (daemon/checkpointer_test.cc); SupervisorLauncher is the real one.
#pragma once

#include <string>

#include "common/result.h"
#include "daemon/supervisor.h"
#include "daemon/workload.h"

namespace cedana::daemon {

class WorkloadLauncher {
 public:
  virtual ~WorkloadLauncher() = default;
  // The workload `id` must be recorded in `records` (spec.json). Waits up to `timeout_seconds`
  // for the supervisor's report.
  virtual Result<SupervisorStarted> Launch(const WorkloadRecords& records, const std::string& id,
                                           int timeout_seconds) const = 0;
};

// Runs `self_exe supervisor` (LaunchSupervisor).
class SupervisorLauncher : public WorkloadLauncher {
 public:
  explicit SupervisorLauncher(std::string self_exe) : self_exe_(std::move(self_exe)) {}
  Result<SupervisorStarted> Launch(const WorkloadRecords& records, const std::string& id,
                                   int timeout_seconds) const override {
    return LaunchSupervisor(records, id, self_exe_, timeout_seconds);
  }

 private:
  std::string self_exe_;
};

}  // namespace cedana::daemon
