// Listing: questions answered from a CheckpointStore alone (docs/storage.md): the checkpoints of
// an owner/label newest first, a checkpoint by id, and retention (keep the newest K per label).
// It lives in image/ because it parses manifests; storage/ knows nothing of manifests.
// Stateless functions; thread-safe as far as the store is.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

// One committed checkpoint: where it is and what its manifest says.
struct ListedCheckpoint {
  storage::CheckpointRef ref;
  Manifest manifest;
};

// Committed checkpoints, newest first (created_at_ms, then id, descending). Manifests that fail
// to parse are skipped with a warning; so are checkpoints deleted while listing.
Result<std::vector<ListedCheckpoint>> ListEntries(storage::CheckpointStore& store,
                                                  const std::optional<std::string>& owner,
                                                  const std::optional<std::string>& label);
Result<std::vector<Manifest>> ListManifests(storage::CheckpointStore& store,
                                            const std::optional<std::string>& owner,
                                            const std::optional<std::string>& label);

// kNotFound "checkpoint <id> not found in <store>"; the reason when a checkpoint of that id is
// there but its manifest cannot be used (a symlink, too large, unreadable).
Result<std::pair<storage::CheckpointRef, Manifest>> FindById(storage::CheckpointStore& store,
                                                             const std::string& id);

// Deletes all but the newest `keep` checkpoints of owner/label; keep <= 0 keeps all. Tries
// every deletion and returns the first failure.
Status ApplyRetention(storage::CheckpointStore& store, const std::string& owner,
                      const std::string& label, int keep);

}  // namespace cedana::image
