// What a dump (Checkpointer::Dump, daemon/checkpointer.h) takes and gives. It checkpoints a
// managed workload (or any process tree by pid): CRIU's images go into compressed streams in the
// checkpoint store (daemon/dump_images.h), the manifest is committed last, retention follows.
// Rollback guarantees: a failed dump leaves the workload running and thawed, and leaves no
// committed checkpoint behind; a managed workload's failed or refused dump is recorded as its
// notice (WorkloadRecords::SaveNotice) for the jobs list.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "common/phase_durations.h"
#include "common/result.h"
#include "daemon/node_context.h"
#include "image/manifest.h"

namespace cedana::daemon {

struct DumpOptions {
  std::string workload_id;        // a managed workload, or
  pid_t pid = 0;                  // any process tree (shell job)
  bool leave_running = false;     // the workload continues after the dump
  std::string dir;                // checkpoint dir; "" = configured
  std::string compression;        // "" = configured
  std::string tcp;                // outside TCP connections (daemon/tcp_policy.h); "" = configured
  int streams = 0;                // 0 = configured
  std::string label;              // "" = the workload's label
  std::string reason = "manual";  // why (common/checkpoint_reason.h), kept in the manifest
  int64_t waited_ms = 0;          // in the dump queue before it started, for its log line
  // Called once the checkpoint is stored, before its commit (the tree still stopped unless left
  // running): an error rolls the dump back as any failed step does. A part of a job over several
  // nodes waits here for the batch node's word (daemon/step_parts.h).
  std::function<Status(image::Manifest*)> before_commit;
};

struct DumpOutcome {
  image::Manifest manifest;
  std::string location;  // "<store>/<owner>/<label>/<id>"
  // How long each step took, in order (ms): queue (waiting for a dump slot), prepare, freeze
  // (CRIU dumping the stopped tree), store (pack, compress, upload), commit, finish (the tree
  // ended, retention). `cedana dump --profile`.
  PhaseDurations phases_ms;
};

// phase: "dumping", "packing", "committing"; done/total in bytes where known.
using DumpProgress = std::function<void(const std::string& phase, uint64_t done, uint64_t total)>;

// The name of a dump's images dir in the work dir: recovery finds CRIU's log there.
std::string DumpImagesName(const std::string& checkpoint_id);

// What a dump of `o` asks of the node, for its place in the dump queue (daemon/dump_queue.h).
// deadline_ms: when SLURM ends the job, unix ms; 0 = none.
DumpDemand DemandOf(NodeContext& node, const DumpOptions& o, int64_t deadline_ms);

}  // namespace cedana::daemon
