#include "slurm_bin/slurm_job.h"

#include <mutex>

#include <fmt/format.h>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace cedana::slurm_bin {

SlurmJob::SlurmJob(uint32_t job_id) : job_id_(job_id) {
  static std::once_flag init;
  std::call_once(init, [] { slurm_init(nullptr); });
}

Result<bool> SlurmJob::Preempted() {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, job_id_, SHOW_ALL) != SLURM_SUCCESS || msg == nullptr)
    return UnavailableError(fmt::format("loading job {}: {}", job_id_, slurm_strerror(slurm_get_errno())));
  bool preempted = msg->record_count > 0 && msg->job_array[0].preempt_time != 0;
  slurm_free_job_info_msg(msg);
  return preempted;
}

}  // namespace cedana::slurm_bin
