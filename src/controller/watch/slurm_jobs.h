// The SLURM jobs slurmctld knows now, through libslurm (slurm_load_jobs). Blocking RPC to
// slurmctld; call from the watcher thread only. kUnavailable when slurmctld does not answer.
#pragma once

#include <vector>

#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

Result<std::vector<JobRecord>> LoadSlurmJobs();

}  // namespace cedana::controller
