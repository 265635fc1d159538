// Abandoned checkpoints: begun long ago and never committed. A node daemon that dies during a
// dump puts its own half-written checkpoint right when it starts again (daemon/recovery.h, from
// its dump journal); this is for a node that never comes back, whose journal is gone with it,
// leaving streams without a manifest in a shared checkpoint dir. No dump lasts kAbandonedAfter,
// so whichever node daemon sees one first removes it: at start and every hour (Housekeeper).
#pragma once

#include <chrono>
#include <vector>

#include "daemon/node_context.h"
#include "storage/checkpoint_store.h"

namespace cedana::daemon {

inline constexpr std::chrono::hours kAbandonedAfter{24};
inline constexpr std::chrono::hours kAbandonedSweepEvery{1};

// Those of `uncommitted` begun before `now - kAbandonedAfter`, by the time in their id. An id
// without a time (not written by cedana) is kept: nothing says it is old.
std::vector<storage::CheckpointRef> Abandoned(std::vector<storage::CheckpointRef> uncommitted,
                                              std::chrono::system_clock::time_point now);

// Removes the node's checkpoint dir's abandoned checkpoints, each with its owner's file identity
// in unprivileged mode (an owner unknown here is left to a node that knows it), and logs each.
void SweepAbandonedCheckpoints(const NodeContext& node);

}  // namespace cedana::daemon
