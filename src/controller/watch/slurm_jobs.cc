#include "controller/watch/slurm_jobs.h"

#include <fmt/format.h>

#include "common/system_names.h"
#include "controller/watch/libslurm.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace cedana::controller {
namespace {

std::string Str(const char* s) { return s ? s : ""; }

// squeue's long state names (libslurm does not export job_state_string in its public header).
std::string StateName(uint32_t state) {
  switch (state & JOB_STATE_BASE) {
    case JOB_PENDING: return "PENDING";
    case JOB_RUNNING: return "RUNNING";
    case JOB_SUSPENDED: return "SUSPENDED";
    case JOB_COMPLETE: return "COMPLETED";
    case JOB_CANCELLED: return "CANCELLED";
    case JOB_FAILED: return "FAILED";
    case JOB_TIMEOUT: return "TIMEOUT";
    case JOB_NODE_FAIL: return "NODE_FAIL";
    case JOB_PREEMPTED: return "PREEMPTED";
    case JOB_BOOT_FAIL: return "BOOT_FAIL";
    case JOB_DEADLINE: return "DEADLINE";
    case JOB_OOM: return "OUT_OF_MEMORY";
    default: return "UNKNOWN";
  }
}

}  // namespace

Result<std::vector<JobRecord>> LoadSlurmJobs() {
  CEDANA_RETURN_IF_ERROR(InitLibslurm());
  job_info_msg_t* msg = nullptr;
  if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS || msg == nullptr)
    return UnavailableError(fmt::format("loading jobs from slurmctld: {}", slurm_strerror(slurm_get_errno())));
  std::vector<JobRecord> jobs;
  for (uint32_t i = 0; i < msg->record_count; ++i) {
    const slurm_job_info_t& j = msg->job_array[i];
    JobRecord r;
    r.job_id = j.job_id;
    r.name = Str(j.name);
    r.user = UserName(j.user_id);
    r.partition = Str(j.partition);
    r.node = Str(j.nodes);
    r.state = StateName(j.job_state);
    r.start_time = static_cast<int64_t>(j.start_time);
    jobs.push_back(std::move(r));
  }
  slurm_free_job_info_msg(msg);
  return jobs;
}

}  // namespace cedana::controller
