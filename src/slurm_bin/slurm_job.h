// SlurmJob: what the job proxy asks SLURM about its own job, through libslurm. Not
// thread-safe; one per proxy.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace cedana::slurm_bin {

class SlurmJob {
 public:
  explicit SlurmJob(uint32_t job_id);
  // true once slurmctld has decided to preempt the job (its preempt_time is set): SLURM 22.05
  // does not signal a batch script at preemption, so the proxy polls for this.
  Result<bool> Preempted();

 private:
  uint32_t job_id_;
};

}  // namespace cedana::slurm_bin
