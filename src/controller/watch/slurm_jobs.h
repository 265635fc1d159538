// The SLURM jobs slurmctld knows now, and the events of their lives that this look shows,
// through libslurm (slurm_load_jobs). Blocking RPC to slurmctld; call from the watcher thread
// only. kUnavailable when slurmctld does not answer.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

struct SlurmJobs {
  std::vector<JobRecord> jobs;
  std::vector<JobEvent> events;  // what this look proves of each job's life (timeline/job_events.h)
};

// Reads the jobs through libslurm, passing the time of the last answer so that slurmctld
// answers "no change" (almost no work for it) when no job changed since. Not thread-safe: the
// watcher thread's.
class SlurmJobsReader {
 public:
  SlurmJobsReader() = default;
  SlurmJobsReader(const SlurmJobsReader&) = delete;
  SlurmJobsReader& operator=(const SlurmJobsReader&) = delete;
  ~SlurmJobsReader();
  // nullopt when nothing changed since the last answer.
  Result<std::optional<SlurmJobs>> Load();
  // The next Load reads every job, as the first one does.
  void Forget();

 private:
  void* last_ = nullptr;  // job_info_msg_t*, kept for its last_update
};

// What changed between two looks: jobs new or different (name, user, partition, node, state,
// start), and the ids of jobs gone. The catalog then writes only those (Catalog::UpdateJobs).
struct JobChanges {
  std::vector<JobRecord> changed;
  std::vector<int64_t> removed;
};
JobChanges DiffJobs(const std::map<int64_t, JobRecord>& before, const std::vector<JobRecord>& now);

}  // namespace cedana::controller
