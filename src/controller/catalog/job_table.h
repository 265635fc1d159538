// SLURM jobs as libslurm reports them, with which of them a node daemon manages and the
// newest notice for their owner. Thread-safe (Database is).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class JobTable {
 public:
  explicit JobTable(Database& db) : db_(db) {}

  // Replaces the job table with what libslurm reported now (one transaction).
  Status Sync(const std::vector<JobRecord>& jobs);
  // Writes only what changed since the last look (watch/slurm_jobs.h, DiffJobs): new or changed
  // jobs, and the ids of jobs slurmctld forgot (with their notices and events). One transaction.
  Status Update(const std::vector<JobRecord>& changed, const std::vector<int64_t>& removed);
  // Replaces what node `agent_node` manages (one transaction).
  Status SyncManaged(const std::string& agent_node, const std::vector<ManagedJob>& jobs);
  Result<std::vector<JobRecord>> List(const std::optional<std::string>& user);
  // Newest job first. kInvalidArgument for an `after` that is not a job id.
  Result<Paged<JobRecord>> ListPage(const JobFilter& filter, const PageRequest& page);
  Result<JobRecord> Get(int64_t job_id);  // kNotFound

 private:
  // A strictly increasing millisecond stamp: a sync deletes the rows older than its stamp, so
  // two syncs within one millisecond must still get different stamps.
  int64_t NextStamp();
  Status Upsert(const JobRecord& j, int64_t stamp);

  std::atomic<int64_t> last_stamp_{0};
  Database& db_;
};

}  // namespace cedana::controller
