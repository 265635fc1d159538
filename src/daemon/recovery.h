// Recovery: what a node daemon that was killed part-way through a dump or a restore left behind,
// put right when the next one starts (before it accepts requests):
// - a dump it began (DumpJournal): if its checkpoint was committed and the dump was to stop the
//   tree, the stop is finished (recorded as checkpointed, then killed); otherwise whatever was
//   stored of it is deleted and the tree continued. A CRIU still working on the tree (it
//   outlives the daemon) is waited for first, up to the CRIU deadline.
// - a direct restore whose tree was never continued (the `verifying` marker): its pages were
//   not all verified, so the tree is killed, never continued; the checkpoint stays for a retry.
// - the work dir's images dirs: no dump or restore is in progress at start, so all are removed.
// - the checkpoint dir's abandoned checkpoints (daemon/abandoned_checkpoints.h).
// SweepWorkDir is also run every few seconds (Housekeeper): an images dir that no dump or restore
// of this daemon claims (NodeContext::ClaimWorkDir) is left over and removed, with a warning
// unless its dump or restore retired it (NodeContext::RetireWorkDir).
#pragma once

#include "daemon/node_context.h"

namespace cedana::daemon {

void RecoverInterruptedOperations(NodeContext& node);
void SweepWorkDir(NodeContext& node);

}  // namespace cedana::daemon
