// A job's events, the stored part of its timeline (migration 6). Each is kept once per (job,
// kind, run): the first report of it stays, except that a node daemon's word on a start adds
// which checkpoint it resumed from. They go with the job, as its notice does. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class JobEventLog {
 public:
  explicit JobEventLog(Database& db) : db_(db) {}

  Status Record(const std::vector<JobEvent>& events);
  Status RecordRunStarts(const std::vector<JobEvent>& starts);
  Result<std::vector<JobEvent>> List(int64_t job_id);  // oldest first

 private:
  Database& db_;
};

}  // namespace cedana::controller
