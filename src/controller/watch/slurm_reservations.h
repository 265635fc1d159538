// What the maintenance planner needs from slurmctld, through libslurm: reservations, the
// cluster's JobRequeue, requeueing a job, and host list arithmetic. Blocking RPCs: call from
// the watcher thread only. kUnavailable when slurmctld does not answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::controller {

struct SlurmReservation {
  std::string name;
  std::string nodes;                     // a SLURM host list: "node[0-8]"
  int64_t start_time = 0, end_time = 0;  // seconds since the epoch
  int64_t max_start_delay = 0;           // seconds; 0 when not set
  bool maint = false;                    // flags=maint
};

Result<std::vector<SlurmReservation>> LoadSlurmReservations();
// slurm.conf's JobRequeue as slurmctld runs it.
Result<bool> SlurmJobRequeueEnabled();
// Requeues a running batch job (as `scontrol requeue`): SLURM ends it, which makes the job
// proxy checkpoint it, and schedules it again.
Status RequeueSlurmJob(int64_t job_id);
// Whether two SLURM host lists ("a[1-3],b") share a host.
bool HostListsOverlap(const std::string& a, const std::string& b);

}  // namespace cedana::controller
