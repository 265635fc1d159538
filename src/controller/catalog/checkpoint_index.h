// The checkpoint index: a cache of the checkpoint storage, which stays the source of truth
// (watch/checkpoint_indexer.h keeps it). Thread-safe (Database is).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class CheckpointIndex {
 public:
  explicit CheckpointIndex(Database& db) : db_(db) {}

  // Replaces the index with the checkpoints found in storage (keeps policy_id of known ones).
  // One transaction.
  Status Sync(const std::vector<CheckpointRecord>& found);
  // Writes only what changed since the last refresh: new or changed checkpoints, and the ids
  // of vanished ones. One transaction.
  Status Update(const std::vector<CheckpointRecord>& changed,
                const std::vector<std::string>& removed);
  Status Upsert(const CheckpointRecord& c);
  Result<std::vector<CheckpointRecord>> List(const CheckpointFilter& filter);
  // Newest first. kInvalidArgument for an `after` that no page gave.
  Result<Paged<CheckpointRecord>> ListPage(const CheckpointFilter& filter, const PageRequest& page);
  Result<CheckpointRecord> Get(const std::string& id);  // kNotFound
  Status Delete(const std::string& id);
  Status SetPolicy(const std::string& id, int64_t policy_id);

 private:
  Database& db_;
};

}  // namespace cedana::controller
