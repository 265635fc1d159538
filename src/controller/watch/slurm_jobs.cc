#include "controller/watch/slurm_jobs.h"

#include <cerrno>

#include <set>

#include <fmt/format.h>

#include "common/system_names.h"
#include "controller/timeline/job_events.h"
#include "slurm/libslurm.h"

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
  life.settling =
      (j.job_state & (JOB_COMPLETING | JOB_REQUEUE | JOB_REQUEUE_HOLD | JOB_REQUEUE_FED)) != 0;
  life.restart_count = j.restart_cnt;
  life.submit_time = static_cast<int64_t>(j.submit_time);
  life.start_time = static_cast<int64_t>(j.start_time);
  life.end_time = static_cast<int64_t>(j.end_time);
  life.preempt_time = static_cast<int64_t>(j.preempt_time);
  return life;
}

}  // namespace

SlurmJobsReader::~SlurmJobsReader() { Forget(); }

void SlurmJobsReader::Forget() {
  slurm_free_job_info_msg(static_cast<job_info_msg_t*>(last_));
  last_ = nullptr;
}

Result<std::optional<SlurmJobs>> SlurmJobsReader::Load() {
  CEDANA_RETURN_IF_ERROR(slurm::InitLibslurm());
  auto* last = static_cast<job_info_msg_t*>(last_);
  job_info_msg_t* msg = nullptr;
  if (slurm_load_jobs(last ? last->last_update : 0, &msg, SHOW_ALL) != SLURM_SUCCESS ||
      msg == nullptr) {
    if (errno == SLURM_NO_CHANGE_IN_DATA) return std::optional<SlurmJobs>();
    return UnavailableError(fmt::format("loading jobs from slurmctld: {}", slurm_strerror(errno)));
  }
  slurm_free_job_info_msg(last);
  last_ = msg;
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
  return std::optional<SlurmJobs>(std::move(out));
}

JobChanges DiffJobs(const std::map<int64_t, JobRecord>& before, const std::vector<JobRecord>& now) {
  auto same = [](const JobRecord& a, const JobRecord& b) {
    return a.name == b.name && a.user == b.user && a.partition == b.partition && a.node == b.node &&
           a.state == b.state && a.start_time == b.start_time;
  };
  JobChanges c;
  std::set<int64_t> seen;
  for (const JobRecord& j : now) {
    seen.insert(j.job_id);
    auto it = before.find(j.job_id);
    if (it == before.end() || !same(it->second, j)) c.changed.push_back(j);
  }
  for (const auto& [id, j] : before)
    if (seen.count(id) == 0) c.removed.push_back(id);
  return c;
}

}  // namespace cedana::controller
