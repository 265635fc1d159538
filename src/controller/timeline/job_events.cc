#include "controller/timeline/job_events.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace cedana::controller {
namespace {

bool IsFinal(const std::string& state) {
  static constexpr std::array<std::string_view, 9> kFinal = {
      "COMPLETED", "CANCELLED", "FAILED",   "TIMEOUT",      "NODE_FAIL",
      "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};
  return std::find(kFinal.begin(), kFinal.end(), state) != kFinal.end();
}

JobEvent EventAt(int64_t job_id, const char* kind, int64_t run, int64_t at_ms) {
  JobEvent e;
  e.job_id = job_id;
  e.kind = kind;
  e.run = run;
  e.at_ms = at_ms;
  return e;
}

// libslurm's times are seconds.
JobEvent Event(const SlurmJobLife& job, const char* kind, int64_t run, int64_t at_seconds) {
  return EventAt(job.job_id, kind, run, at_seconds * 1000);
}

// A run's events in the order they happen, for events stamped in the same second.
int RankOf(const std::string& kind) {
  static constexpr std::array<std::string_view, 6> kOrder = {kEventSubmitted, kEventStarted,
                                                             kEventPreempted, kEventCheckpoint,
                                                             kEventRequeued,  kEventEnded};
  return static_cast<int>(std::find(kOrder.begin(), kOrder.end(), kind) - kOrder.begin());
}

}  // namespace

std::vector<JobEvent> EventsOfSlurmJob(const SlurmJobLife& job) {
  std::vector<JobEvent> out;
  if (job.settling) return out;
  const int64_t run = job.restart_count;
  if (job.submit_time > 0) {
    if (run == 0) out.push_back(Event(job, kEventSubmitted, 0, job.submit_time));
    else out.push_back(Event(job, kEventRequeued, run - 1, job.submit_time));
  }
  const bool final = IsFinal(job.state);
  // A job cancelled while pending ends with its start and end times both set to that moment.
  const bool ran =
      job.start_time > 0 && job.state != "PENDING" && (!final || job.start_time < job.end_time);
  if (ran) out.push_back(Event(job, kEventStarted, run, job.start_time));
  if (ran && job.preempt_time >= job.start_time)
    out.push_back(Event(job, kEventPreempted, run, job.preempt_time));
  if (final && job.end_time > 0) {
    out.push_back(Event(job, kEventEnded, run, job.end_time));
    out.back().detail = job.state;
  }
  return out;
}

std::vector<JobEvent> RecordedEvents::New(const std::vector<JobEvent>& events) const {
  std::vector<JobEvent> out;
  for (const JobEvent& e : events)
    if (!keys_.count({e.job_id, e.kind, e.run})) out.push_back(e);
  return out;
}

void RecordedEvents::Mark(const std::vector<JobEvent>& recorded, const std::vector<int64_t>& jobs) {
  for (const JobEvent& e : recorded) keys_.insert({e.job_id, e.kind, e.run});
  const std::set<int64_t> known(jobs.begin(), jobs.end());
  std::erase_if(keys_, [&known](const auto& key) { return !known.count(std::get<0>(key)); });
}

JobEvent StartOfRun(int64_t job_id, int64_t run, int64_t started_at_ms,
                    const std::string& restored_from) {
  JobEvent e = EventAt(job_id, kEventStarted, run, started_at_ms);
  e.detail = restored_from.empty() ? "fresh" : "resumed";
  e.checkpoint_id = restored_from;
  return e;
}

std::vector<JobEvent> JobTimeline(std::vector<JobEvent> events,
                                  const std::vector<CheckpointRecord>& checkpoints) {
  auto seen_preempted = [&events](int64_t run) {
    return std::any_of(events.begin(), events.end(), [run](const JobEvent& e) {
      return e.kind == kEventPreempted && e.run == run;
    });
  };
  for (const CheckpointRecord& c : checkpoints) {
    // slurmctld forgets a preemption at the requeue, which can come before the watcher's next
    // look; the checkpoint the preemption asked for says when it was asked.
    if (c.reason == "preemption" && !seen_preempted(c.restart_count)) {
      JobEvent p = EventAt(c.job_id.value_or(0), kEventPreempted, c.restart_count,
                           c.created_ms - c.duration_ms);
      p.detail = "when its checkpoint was asked for";
      events.push_back(std::move(p));
    }
    JobEvent e = EventAt(c.job_id.value_or(0), kEventCheckpoint, c.restart_count, c.created_ms);
    e.detail = c.reason;
    e.checkpoint_id = c.id;
    e.size = c.size;
    e.duration_ms = c.duration_ms;
    e.frozen_ms = c.frozen_ms;
    events.push_back(std::move(e));
  }
  std::stable_sort(events.begin(), events.end(), [](const JobEvent& a, const JobEvent& b) {
    if (a.at_ms != b.at_ms) return a.at_ms < b.at_ms;
    if (a.run != b.run) return a.run < b.run;
    return RankOf(a.kind) < RankOf(b.kind);
  });
  return events;
}

}  // namespace cedana::controller
