// Operations: the dumps and restores the controller asked node daemons for, and how they
// went. Thread-safe (Database is).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class OperationTable {
 public:
  explicit OperationTable(Database& db) : db_(db) {}

  Result<OperationRecord> Create(const OperationRecord& op);
  // Marks node's queued operations running and returns them.
  Result<std::vector<OperationRecord>> Claim(const std::string& node);
  Status Update(const OperationRecord& op);
  Result<OperationRecord> Get(int64_t id);  // kNotFound
  Result<std::vector<OperationRecord>> List(const std::optional<std::string>& owner,
                                            std::optional<OperationState> state, int limit);
  // The newest operation of kind dump for this job, optionally only from one policy.
  Result<std::optional<OperationRecord>> LastDump(int64_t job_id, std::optional<int64_t> policy_id);
  // Operations queued or running for longer than `stale_ms` become failed (their node is gone).
  Status FailStale(int64_t stale_ms);

 private:
  Database& db_;
};

}  // namespace cedana::controller
