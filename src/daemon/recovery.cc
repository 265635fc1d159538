#include "daemon/recovery.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/log.h"
#include "daemon/abandoned_checkpoints.h"
#include "daemon/caller_files.h"
#include "daemon/dump_job.h"
#include "daemon/dump_journal.h"
#include "image/chunk_sweep.h"

namespace cedana::daemon {
namespace {

void RecoverDump(NodeContext& node, const DumpIntent& d) {
  // The tree is ours only while its pid still names the process the dump began with.
  const bool alive =
      d.pid > 0 && d.pid_start != 0 && node.processes().StartTime(d.pid) == d.pid_start;
  if (alive) {
    auto deadline = std::chrono::steady_clock::now() + node.engine().settings().timeout;
    // A CRIU that outlived its daemon still traces the tree: let it finish its step.
    while (node.processes().Traced(d.pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Result<std::unique_ptr<storage::CheckpointStore>> store = node.OpenStore("");
  const storage::CheckpointRef ref{d.owner, d.label, d.checkpoint_id};
  const auto [uid, gid] = node.StoreIdentityFor(d.uid, d.gid);
  bool committed = false;
  if (store.has_value()) {
    AsFileUser as(uid, gid);
    committed = (*store)->ReadManifest(ref).has_value();
    if (!committed) {
      if (Status s = image::RemoveCheckpoint(**store, ref); !s.ok())
        log::Warn("recovery: removing the half-written checkpoint {}: {}", ref.Path(),
                  s.ToString());
    }
  } else {
    log::Warn("recovery: checkpoint dir: {}", store.error().ToString());
  }
  const std::string what = d.workload_id.empty() ? fmt::format("pid {}", d.pid)
                                                 : fmt::format("workload {}", d.workload_id);
  // The supervisor keeps a workload whose job is over alive while the marker exists.
  auto end_dumping = [&] {
    if (!d.workload_id.empty()) ::unlink(node.records().DumpingMarker(d.workload_id).c_str());
  };
  if (committed && !d.leave_running) {
    if (!d.workload_id.empty())
      (void)node.records().SaveEnd(d.workload_id, WorkloadEnd{d.checkpoint_id});
    if (alive) node.processes().SignalTree(d.pid, SIGKILL);
    end_dumping();
    log::Warn(
        "recovery: the daemon stopped after checkpoint {} of {} was committed; finished its "
        "stop",
        d.checkpoint_id, what);
    return;
  }
  if (alive && !d.leave_running) {
    // CRIU left the stopped tree's TCP sockets in repair mode and locked: undone first.
    const std::string dump_log =
        node.config().node.work_dir + "/" + DumpImagesName(d.checkpoint_id) + "/dump.log";
    if (Status s = node.processes().UndoNetworkLock(dump_log, d.pid); !s.ok())
      log::Warn("recovery: checkpoint {}: undoing CRIU's network lock: {}", d.checkpoint_id,
                s.ToString());
  }
  int continued = alive && !d.leave_running ? node.processes().SignalTree(d.pid, SIGCONT) : 0;
  end_dumping();
  log::Warn("recovery: the daemon stopped during checkpoint {} of {}{}; {}", d.checkpoint_id, what,
            committed ? " (committed, leave-running)" : ", which was removed",
            alive ? fmt::format("continued {} processes", continued) : "the tree is gone");
}

void RecoverRestores(NodeContext& node) {
  Result<std::vector<std::string>> ids = node.records().List();
  if (!ids.has_value()) return;
  for (const std::string& id : *ids) {
    const std::string marker = node.records().VerifyingMarker(id);
    if (!fs::Exists(marker)) continue;
    Result<WorkloadState> state = node.records().LoadState(id);
    if (state.has_value() && state->status == WorkloadStatus::kRunning && state->pid > 0)
      node.processes().SignalTree(state->pid, SIGKILL);
    ::unlink(marker.c_str());
    log::Warn(
        "recovery: the daemon stopped during the direct restore of workload {}, before "
        "every stream was verified; killed it (the checkpoint is kept)",
        id);
  }
}

}  // namespace

void RecoverInterruptedOperations(NodeContext& node) {
  const DumpJournal journal(node.config().node.state_dir);
  if (Result<std::vector<DumpIntent>> pending = journal.Pending(); pending.has_value()) {
    for (const DumpIntent& d : *pending) {
      RecoverDump(node, d);
      journal.End(d.checkpoint_id);
    }
  } else {
    log::Warn("recovery: {}", pending.error().ToString());
  }
  RecoverRestores(node);
  SweepWorkDir(node);
  SweepAbandonedCheckpoints(node);
}

void SweepWorkDir(NodeContext& node) {
  const std::string& work_dir = node.config().node.work_dir;
  Result<std::vector<std::string>> names = fs::ListDir(work_dir);
  if (!names.has_value()) return;
  int removed = 0;  // left over, not retired
  for (const std::string& name : *names) {
    if (name.rfind("dump-", 0) != 0 && name.rfind("restore-", 0) != 0) continue;
    if (node.WorkDirClaimed(name)) continue;
    if (!fs::RemoveTree(work_dir + "/" + name).ok()) continue;
    if (!node.WorkDirRemoved(name)) ++removed;
  }
  if (removed > 0)
    log::Warn("recovery: removed {} images dirs no dump or restore uses from {}", removed,
              work_dir);
}

}  // namespace cedana::daemon
