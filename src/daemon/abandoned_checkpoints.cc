#include "daemon/abandoned_checkpoints.h"

#include <algorithm>

#include "common/log.h"
#include "common/system_names.h"
#include "daemon/caller_files.h"
#include "image/chunk_sweep.h"
#include "storage/checkpoint_id.h"

namespace cedana::daemon {

std::vector<storage::CheckpointRef> Abandoned(std::vector<storage::CheckpointRef> uncommitted,
                                              std::chrono::system_clock::time_point now) {
  std::erase_if(uncommitted, [&](const storage::CheckpointRef& ref) {
    auto begun = storage::CheckpointIdTime(ref.id);
    return !begun.has_value() || *begun > now - kAbandonedAfter;
  });
  return uncommitted;
}

void SweepAbandonedCheckpoints(const NodeContext& node) {
  Result<std::unique_ptr<storage::CheckpointStore>> store = node.OpenStore("");
  if (!store.has_value()) return;  // said by every other use of the store
  Result<std::vector<storage::CheckpointRef>> uncommitted = [&] {
    const auto [uid, gid] = node.StoreIdentityFor(0, 0);
    AsFileUser as(uid, gid);
    return (*store)->ListUncommitted();
  }();
  if (!uncommitted.has_value()) {
    log::Warn("storage: looking for abandoned checkpoints in {}: {}", (*store)->Describe(),
              uncommitted.error().ToString());
    return;
  }
  for (const storage::CheckpointRef& ref :
       Abandoned(std::move(*uncommitted), std::chrono::system_clock::now())) {
    Result<std::pair<uid_t, gid_t>> ids = IdsOfUser(ref.owner);
    // Unprivileged mode writes as the owner: whose files these are is unknown on this node.
    if (!ids.has_value() && node.config().node.slurm_unprivileged) continue;
    const auto [uid, gid] = ids.has_value() ? node.StoreIdentityFor(ids->first, ids->second)
                                            : std::pair<uid_t, gid_t>{0, 0};
    AsFileUser as(uid, gid);
    if (Status s = image::RemoveCheckpoint(**store, ref); !s.ok()) {
      log::Warn("storage: removing the abandoned checkpoint {}: {}", ref.Path(), s.ToString());
    } else {
      log::Warn(
          "storage: removed the abandoned checkpoint {} (begun over {} h ago, never committed)",
          ref.Path(), kAbandonedAfter.count());
    }
  }
}

}  // namespace cedana::daemon
