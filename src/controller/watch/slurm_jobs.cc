#include "controller/watch/slurm_jobs.h"

#include <fmt/format.h>

#include "common/system_names.h"
#include "controller/timeline/job_events.h"
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

SlurmJobLife LifeOf(const slurm_job_info_t& j) {
  SlurmJobLife life;
  life.job_id = j.job_id;
  life.state = StateName(j.job_state);
  life.settling = (j.job_state & (JOB_COMPLETING | JOB_REQUEUE | JOB_REQUEUE_HOLD | JOB_REQUEUE_FED)) != 0;
  life.restart_count = j.restart_cnt;
  life.submit_time = static_cast<int64_t>(j.submit_time);
  life.start_time = static_cast<int64_t>(j.start_time);
  life.end_time = static_cast<int64_t>(j.end_time);
  life.preempt_time = static_cast<int64_t>(j.preempt_time);
  return life;
}

}  // namespace

Result<SlurmJobs> LoadSlurmJobs() {
  CEDANA_RETURN_IF_ERROR(InitLibslurm());
  job_info_msg_t* msg = nullptr;
  if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS || msg == nullptr)
    return UnavailableError(fmt::format("loading jobs from slurmctld: {}", slurm_strerror(slurm_get_errno())));
  SlurmJobs out;
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
    out.jobs.push_back(std::move(r));
    for (JobEvent& e : EventsOfSlurmJob(LifeOf(j))) out.events.push_back(std::move(e));
  }
  slurm_free_job_info_msg(msg);
  return out;
}

}  // namespace cedana::controller
