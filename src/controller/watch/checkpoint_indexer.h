// CheckpointIndexer: keeps the catalog's checkpoint index equal to the checkpoint storage (the
// source of truth, DESIGN.md §4): new committed checkpoints are added with what their manifests
// say, vanished ones removed. Manifests are read once per checkpoint id. Not thread-safe: one
// watcher thread calls Refresh.
#pragma once

#include <map>
#include <string>

#include "common/config.h"
#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

class CheckpointIndexer {
 public:
  // cluster_key: verifies manifests ("good") when readable; "" marks them "unverified".
  CheckpointIndexer(const Config& config, Catalog& catalog, std::string cluster_key);
  // kUnavailable when the storage cannot be listed; the index is left as it was.
  Status Refresh();

 private:
  const Config& config_;
  Catalog& catalog_;
  const std::string cluster_key_;
  std::map<std::string, CheckpointRecord> known_;
};

}  // namespace cedana::controller
