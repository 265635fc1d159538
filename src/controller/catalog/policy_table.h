// Checkpoint policies: which jobs are checkpointed how often, and how many of their
// checkpoints are kept. Thread-safe (Database is).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class PolicyTable {
 public:
  explicit PolicyTable(Database& db) : db_(db) {}

  Result<PolicyRecord> Create(const PolicyRecord& p);  // kAlreadyExists for a taken name
  Status Update(const PolicyRecord& p);                // kNotFound, kAlreadyExists
  Status Delete(int64_t id);                           // kNotFound
  Result<PolicyRecord> Get(int64_t id);                // kNotFound
  Result<std::vector<PolicyRecord>> List(const std::optional<std::string>& owner);
  Status SetLastRun(int64_t id, int64_t ms);

 private:
  Database& db_;
};

// The selector's column: a JSON object of the fields set. FromJson refuses an unknown key or a
// value of the wrong kind, naming it.
std::string SelectorToJson(const PolicySelector& s);
Result<PolicySelector> SelectorFromJson(const std::string& json);

}  // namespace cedana::controller
