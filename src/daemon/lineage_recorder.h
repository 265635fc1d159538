// RecordFinishedRuns: puts the end of every run that ended by itself
// (WorkloadState::ended_by_itself) into the store once, as its label's lineage record
// (image/lineage.h), so that the next job or restore by label, on any node, starts fresh. Settled
// workloads get a marker in their record dir, so a restarted daemon records what it missed and
// nothing twice. It runs before every restore by label on this node, and every 2 s (Housekeeper).
// Thread-safe.
#pragma once

#include "common/result.h"
#include "daemon/node_context.h"

namespace cedana::daemon {

// Records every end not recorded yet; the first error (the others are still tried). One pass at
// a time in the process.
Status RecordFinishedRuns(const NodeContext& node);

}  // namespace cedana::daemon
