// Checkpointer: node-side checkpointing, one component used by the socket handlers and the
// controller's agent. Dump (dump_job.cc) and Restore (restore_job.cc) each read as a plan (all
// validation, before anything is touched) followed by a short list of named steps with one
// rollback object. Everything they do to the system goes through the node's seams (NodeSeams:
// the CRIU engine, process control, the supervisor launcher) and its checkpoint store, so that
// every rollback path is unit-tested with fakes (checkpointer_test.cc).
#pragma once

#include "common/result.h"
#include "daemon/dump_job.h"
#include "daemon/node_context.h"
#include "daemon/restore_job.h"

namespace cedana::daemon {

class Checkpointer {
 public:
  explicit Checkpointer(NodeContext& node) : node_(node) {}

  // Callers hold a slot of node.dump_queue() around it. Its guarantees: dump_job.h.
  Result<DumpOutcome> Dump(const Caller& caller, const DumpOptions& options,
                           const DumpProgress& progress);
  // Its guarantees: restore_job.h.
  Result<RestoreOutcome> Restore(const Caller& caller, const RestoreOptions& options,
                                 const RestoreProgress& progress);

 private:
  NodeContext& node_;
};

}  // namespace cedana::daemon
