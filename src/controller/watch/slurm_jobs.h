// The SLURM jobs slurmctld knows now, and the events of their lives that this look shows,
// through libslurm (slurm_load_jobs). Blocking RPC to slurmctld; call from the watcher thread
// only. kUnavailable when slurmctld does not answer.
#pragma once

#include <vector>

#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

struct SlurmJobs {
  std::vector<JobRecord> jobs;
  std::vector<JobEvent> events;  // what this look proves of each job's life (timeline/job_events.h)
};

Result<SlurmJobs> LoadSlurmJobs();

}  // namespace cedana::controller
