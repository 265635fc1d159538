// CheckpointIndexer: keeps the catalog's checkpoint index equal to the checkpoint storage (the
// source of truth): new committed checkpoints are added with what their manifests say, vanished
// ones removed. Only manifests whose MAC verifies with the cluster key and whose signed owner,
// label and id are their path's are indexed (storage may be writable by users: one user must not
// place entries in another's listing); the rest are logged once and left out. Manifests are read
// once per checkpoint path, and only what changed since the last refresh is written to the
// catalog. Not thread-safe: one watcher thread calls Refresh.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "common/config.h"
#include "common/result.h"
#include "controller/catalog/catalog.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::controller {

class CheckpointIndexer {
 public:
  // cluster_key: what manifests must be signed with; "" indexes nothing (and says so per
  // checkpoint in the log).
  CheckpointIndexer(const Config& config, Catalog& catalog, std::string cluster_key);
  // kUnavailable when the storage cannot be listed; the index is left as it was.
  Status Refresh();

 private:
  std::string Refusal(const storage::CheckpointRef& ref, const image::Manifest& m) const;
  void MarkFinishedRuns(storage::CheckpointStore& store,
                        std::vector<CheckpointRecord>* found) const;

  static constexpr auto kFullEvery = std::chrono::minutes(5);
  const Config& config_;
  Catalog& catalog_;
  const std::string cluster_key_;
  std::map<std::string, CheckpointRecord> known_;  // by checkpoint path: what the catalog holds
  std::set<std::string> refused_;                  // paths not indexed, not read again
  bool synced_once_ = false;
  std::chrono::steady_clock::time_point last_full_;
};

}  // namespace cedana::controller
