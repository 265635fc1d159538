// JobDeadlines: when SLURM starts to end a job that it told to stop, which the job proxy sends
// with its dump so that the node daemon's queue can order waiting dumps (daemon/dump_queue.h).
// At a preemption slurmctld sets the job's end to the preemption's start plus its partition's
// GraceTime (preempt.c, _job_check_grace_internal); with no grace time it requeues at once, and
// the job has KillWait between SIGTERM and SIGKILL, as at a scancel. A pure decision.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>

namespace cedana::job_proxy {

struct JobDeadlines {
  std::optional<uint32_t> grace_seconds;  // unknown: the partition could not be loaded
  uint32_t kill_wait_seconds = 30;

  // Unix ms; 0 when unknown.
  int64_t AfterPreemption(std::time_t began) const {
    if (!grace_seconds) return 0;
    return (static_cast<int64_t>(began) +
            (*grace_seconds > 0 ? *grace_seconds : kill_wait_seconds)) *
           1000;
  }
  int64_t AfterSigterm(std::time_t now) const {
    return (static_cast<int64_t>(now) + kill_wait_seconds) * 1000;
  }
};

}  // namespace cedana::job_proxy
