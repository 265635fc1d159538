#include "job_proxy/slurm_job.h"

#include <cerrno>

#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "slurm/libslurm.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace cedana::job_proxy {

SlurmJob::SlurmJob(uint32_t job_id) : job_id_(job_id), libslurm_(slurm::InitLibslurm()) {}

Result<JobState> SlurmJob::Load() {
  CEDANA_RETURN_IF_ERROR(libslurm_);
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, job_id_, SHOW_ALL) != SLURM_SUCCESS || msg == nullptr)
    return UnavailableError(fmt::format("loading job {}: {}", job_id_, slurm_strerror(errno)));
  JobState state;
  if (msg->record_count > 0) {
    const slurm_job_info_t& j = msg->job_array[0];
    state.preempted = j.preempt_time != 0;
    state.preempt_time = j.preempt_time;
    // A job without a time limit has an end time far ahead (INFINITE minutes).
    state.end_time = j.time_limit == INFINITE || j.time_limit == NO_VAL ? 0 : j.end_time;
    state.restart_count = j.restart_cnt;
    const uint32_t base = j.job_state & JOB_STATE_BASE;
    state.cancelled = base == JOB_CANCELLED;
    state.requeueing = base == JOB_PENDING || (j.job_state & (JOB_REQUEUE | JOB_REQUEUE_HOLD)) != 0;
  }
  slurm_free_job_info_msg(msg);
  return state;
}

Result<SlurmctldSettings> SlurmJob::LoadSlurmctldSettings() {
  CEDANA_RETURN_IF_ERROR(libslurm_);
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || conf == nullptr)
    return UnavailableError(
        fmt::format("loading slurmctld's configuration: {}", slurm_strerror(errno)));
  SlurmctldSettings settings;
  // 23.02 moved the notice from SlurmctldParameters to PreemptParameters (slurm_conf_editor.h).
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
  const char* params = conf->preempt_params;
  const char* notice = "send_user_signal";
#else
  const char* params = conf->slurmctld_params;
  const char* notice = "preempt_send_user_signal";
#endif
  settings.sends_preempt_notice = params != nullptr && std::strstr(params, notice) != nullptr;
  settings.kill_wait_seconds = conf->kill_wait;
  slurm_free_ctl_conf(conf);
  return settings;
}

Result<uint32_t> SlurmJob::GraceSeconds(const std::string& partition) {
  CEDANA_RETURN_IF_ERROR(libslurm_);
  partition_info_msg_t* msg = nullptr;
  if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS || msg == nullptr)
    return UnavailableError(fmt::format("loading SLURM's partitions: {}", slurm_strerror(errno)));
  std::optional<uint32_t> grace;
  for (uint32_t i = 0; i < msg->record_count; ++i)
    if (msg->partition_array[i].name != nullptr && partition == msg->partition_array[i].name)
      grace = msg->partition_array[i].grace_time;
  slurm_free_partition_info_msg(msg);
  if (!grace.has_value()) return NotFoundError(fmt::format("SLURM has no partition {}", partition));
  return *grace;
}

Status SlurmJob::Requeue() {
  CEDANA_RETURN_IF_ERROR(libslurm_);
  if (slurm_requeue(job_id_, 0) != SLURM_SUCCESS)
    return UnavailableError(fmt::format("requeueing job {}: {}", job_id_, slurm_strerror(errno)));
  return OkStatus();
}

}  // namespace cedana::job_proxy
