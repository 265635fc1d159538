// A job's life as events on one time axis (the UI's timeline): when it was submitted, each run's
// start (fresh, or resumed from which checkpoint), each preemption, requeue and end, and each
// checkpoint with its reason and duration.
//
// slurmctld keeps only a job's present, so the controller's job watcher turns each look at a
// job into the events that look proves (EventsOfSlurmJob); the catalog keeps each event once,
// keyed by (job, kind, run). Runs are numbered by SLURM's restart count: run 0 is the first.
// The node daemon tells which checkpoint a run resumed from (StartOfRun). The checkpoints
// themselves are the checkpoint index's; JobTimeline merges both. No I/O here.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "controller/catalog/catalog.h"

namespace cedana::controller {

// Event kinds, as stored and as the API names them.
inline constexpr char kEventSubmitted[] = "submitted";
inline constexpr char kEventStarted[] = "started";
inline constexpr char kEventPreempted[] = "preempted";
inline constexpr char kEventRequeued[] = "requeued";
inline constexpr char kEventEnded[] = "ended";
inline constexpr char kEventCheckpoint[] = "checkpoint";

// What slurmctld says of a job at one look, as far as its events go (times in seconds, 0 =
// unset, as libslurm has them).
struct SlurmJobLife {
  int64_t job_id = 0;
  std::string state;      // base state: PENDING, RUNNING, COMPLETED, ...
  bool settling = false;  // COMPLETING or a REQUEUE flag: its times are about to be reset
  int64_t restart_count = 0;
  int64_t submit_time = 0, start_time = 0, end_time = 0, preempt_time = 0;
};

// The events one look at a job proves. A requeue resets the job's start, end and preempt times
// and sets its submit time to the requeue's moment, so: submit_time is the submission while the
// restart count is 0 and the last requeue after; a pending job's start_time is only a forecast;
// a settling job is skipped until slurmctld has finished with it.
std::vector<JobEvent> EventsOfSlurmJob(const SlurmJobLife& job);

// The job watcher's memory of the events it has had recorded, so that each look writes only
// what is new (every look proves its jobs' past events again; at 1,000 jobs every 2 s that
// would be thousands of writes). Not thread-safe: the watcher's thread only.
class RecordedEvents {
 public:
  // The events of `events` not marked yet.
  std::vector<JobEvent> New(const std::vector<JobEvent>& events) const;
  // Marks them recorded, and forgets the jobs not in `jobs` (slurmctld forgot them).
  void Mark(const std::vector<JobEvent>& recorded, const std::vector<int64_t>& jobs);
  size_t size() const { return keys_.size(); }

 private:
  std::set<std::tuple<int64_t, std::string, int64_t>> keys_;
};

// A node daemon's word on a run it started: from checkpoint `restored_from`, or fresh ("").
JobEvent StartOfRun(int64_t job_id, int64_t run, int64_t started_at_ms,
                    const std::string& restored_from);

// The job's events and its checkpoints, oldest first (on equal times, in a run's own order).
// A preemption no look caught is dated by the checkpoint it asked for (its request time).
std::vector<JobEvent> JobTimeline(std::vector<JobEvent> events,
                                  const std::vector<CheckpointRecord>& checkpoints);

}  // namespace cedana::controller
