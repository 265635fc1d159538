// Checkpointer::Dump: resolve and plan (daemon/dump_plan.h), then the steps, each named in the
// log and in its errors: prepare (store, images dir, journal), capture (CRIU into the image
// writer, daemon/dump_images.h), check credentials, store, commit, finish (stop the tree,
// retention). One DumpRollback (daemon/dump_rollback.h) undoes whatever a failed step leaves.
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "common/checkpoint_reason.h"
#include "common/fault_point.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/scope_exit.h"
#include "common/unix_time.h"
#include "daemon/caller_files.h"
#include "daemon/checkpointer.h"
#include "daemon/dump_images.h"
#include "daemon/dump_journal.h"
#include "daemon/dump_plan.h"
#include "daemon/dump_rollback.h"
#include "daemon/srun_steps.h"
#include "daemon/step_parts.h"
#include "daemon/tcp_policy.h"
#include "image/checkpoint_listing.h"
#include "image/image_creds.h"

namespace cedana::daemon {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// What a dump keeps while it runs and removes in every case, after the rollback: the images
// dir (claimed, so that the work dir's sweep leaves it), the workload's dumping marker (while it
// exists the supervisor keeps a workload whose job proxy died alive: the dump may still commit)
// and the journal record (a daemon killed mid-dump leaves the tree stopped and the checkpoint
// half-written; the next daemon puts both right from it, daemon/recovery.h).
class DumpWorkspace {
 public:
  DumpWorkspace(NodeContext& node, const DumpPlan& plan) : node_(node), plan_(plan) {}
  ~DumpWorkspace() {
    if (journaled_) DumpJournal(node_.config().node.state_dir).End(plan_.manifest.id);
    if (!marker_.empty()) ::unlink(marker_.c_str());
    if (claimed_) node_.RetireWorkDir(plan_.images_name);
  }
  DumpWorkspace(const DumpWorkspace&) = delete;
  DumpWorkspace& operator=(const DumpWorkspace&) = delete;

  Status Create(const DumpTarget& target, bool leave_running) {
    const image::Manifest& m = plan_.manifest;
    node_.ClaimWorkDir(plan_.images_name);
    claimed_ = true;
    CEDANA_RETURN_IF_ERROR(fs::MakeDirs(plan_.images_dir, 0700));
    if (plan_.criu_identity && ::chown(plan_.images_dir.c_str(), target.uid, target.gid) != 0)
      return ErrnoStatus(errno, "giving the images dir " + plan_.images_dir + " to " + m.owner);
    if (!target.workload_id.empty()) {
      marker_ = node_.records().DumpingMarker(target.workload_id);
      (void)fs::WriteFileAtomic(marker_, m.id, 0644);
    }
    const std::string& state_dir = node_.config().node.state_dir;
    CEDANA_RETURN_IF_ERROR(DumpJournal(state_dir).Begin(
        DumpIntent{m.id, m.owner, m.label, target.workload_id, target.pid,
                   node_.processes().StartTime(target.pid), target.uid, target.gid, leave_running}))
        << "recording the dump in " << state_dir;
    journaled_ = true;
    return OkStatus();
  }

 private:
  NodeContext& node_;
  const DumpPlan& plan_;
  bool claimed_ = false;
  bool journaled_ = false;
  std::string marker_;
};

// The dump of a resolved target (its owner checked).
Result<DumpOutcome> DumpResolved(NodeContext& node, const DumpTarget& target,
                                 const DumpOptions& options, const DumpProgress& progress) {
  const auto started = Clock::now();
  // A workload's srun steps go into its checkpoint: none may be starting while it is taken, and
  // none starts until it is done (daemon/srun_steps.h).
  if (!target.workload_id.empty())
    CEDANA_RETURN_IF_ERROR(HoldStepsForCheckpoint(node, target.workload_id, target.pid));
  ScopeExit steps_held([&] {
    if (!target.workload_id.empty()) node.steps().CheckpointDone(target.workload_id);
  });
  std::unique_lock<std::mutex> lock;
  if (!target.workload_id.empty()) lock = node.LockWorkload(target.workload_id);
  CEDANA_ASSIGN_OR_RETURN(DumpPlan plan, PlanDump(node, target, options));
  image::Manifest& m = plan.manifest;
  const auto [store_uid, store_gid] = plan.store_identity;
  const Config& cfg = node.config();

  // Prepare: the store is writable (as the owner in unprivileged mode: root_squash NFS), the
  // images dir and the journal exist, the TCP policy allows the tree's connections.
  CEDANA_ASSIGN_OR_RETURN(auto store, node.OpenStore(options.dir));
  {
    AsFileUser as_owner(store_uid, store_gid);
    CEDANA_RETURN_IF_ERROR(store->CheckWritable(m.owner));  // its message names the dir
  }
  DumpWorkspace workspace(node, plan);
  CEDANA_RETURN_IF_ERROR(workspace.Create(target, options.leave_running));
  CEDANA_ASSIGN_OR_RETURN(const TcpDecision tcp,
                          DecideTcpForTree(node.processes(), target.pid, plan.outside_tcp,
                                           plan.criu_identity.has_value()));
  if (tcp.mode != TcpMode::kNone) m.workload["tcp"] = TcpModeName(tcp.mode);
  // The ports a restore binds again, and first clears of TIME_WAIT sockets (engine/time_wait.h).
  if (!tcp.ports.empty()) m.workload["tcp_ports"] = tcp.ports;
  if (!target.workload_id.empty())
    if (nlohmann::json steps = DescribeSteps(node, target.workload_id); !steps.empty())
      m.workload["steps"] = std::move(steps);
  // Steps with tasks on other nodes: those nodes dump them meanwhile (daemon/step_parts.h).
  std::unique_ptr<RemoteParts> remote;
  if (!target.workload_id.empty()) {
    CEDANA_ASSIGN_OR_RETURN(remote, RemoteParts::Begin(node, target.workload_id, m.id, options));
  }

  DumpImagesSetup setup;
  setup.store = store.get();
  setup.ref = plan.ref;
  setup.images_dir = plan.images_dir;
  setup.work_dir = cfg.node.work_dir;
  setup.streams = plan.streams;
  setup.codec = m.codec;
  setup.level = image::CodecLevel(m.codec, cfg.node.checkpoint_lz4_acceleration);
  setup.dedup = plan.dedup;
  setup.memory_limit = static_cast<uint64_t>(cfg.node.checkpoint_memory_limit_mib) << 20;
  setup.store_uid = store_uid;
  setup.store_gid = store_gid;
  setup.expected_bytes = [&] { return node.processes().ResidentBytes(target.pid); };
  setup.progress = progress;
  std::unique_ptr<DumpImages> images =
      plan.direct ? DirectDuringDump(std::move(setup)) : PackedAfterDump(std::move(setup));

  // Capture. Without leave-running the tree is left *stopped* rather than killed: if storing or
  // the commit fails it is continued; it is killed only once the checkpoint is committed.
  engine::DumpRequest req;
  req.pid = target.pid;
  req.images_dir = plan.images_dir;
  req.leave_running = options.leave_running;
  req.leave_stopped = !options.leave_running;
  req.shell_job = target.workload_id.empty();
  req.tcp_established = tcp.mode == TcpMode::kEstablished;
  req.tcp_close = tcp.mode == TcpMode::kClose;
  req.run_as = plan.criu_identity;
  if (plan.criu_identity) log::Info("dump: criu runs as {} (unprivileged mode)", m.owner);
  // A direct dump stores while CRIU runs, so what is stored goes on any failure from here.
  DumpRollback rollback(node.processes(), m.id);
  rollback.DeleteStored(images.get(), store.get(), plan.ref, store_uid, store_gid);
  if (progress) progress("dumping", 0, 0);
  const auto criu_started = Clock::now();  // frozen from here while CRIU runs
  CEDANA_RETURN_IF_ERROR(images->Capture(node.engine(), req));
  const auto dumped = Clock::now();
  if (!options.leave_running)
    rollback.ContinueTree(target.pid, req.tcp_established, plan.images_dir + "/dump.log");
  CEDANA_RETURN_IF_ERROR(FaultAt("dump:dumped"));

  // Check credentials. What CRIU recorded is what a restore recreates: a tree that held more
  // than its owner's identity (setuid, setgid, file capabilities) does not become the owner's
  // checkpoint (docs/security.md, D8).
  if (Status owned = image::CheckImagesOwnedBy(plan.images_dir, target.uid, target.gid);
      !owned.ok())
    return Status(owned.code() == Code::kPermissionDenied ? Code::kUnsupported : owned.code(),
                  fmt::format("pid {}: {}", target.pid, owned.message()));

  // Store.
  CEDANA_ASSIGN_OR_RETURN(StoredImages stored, images->Store());
  m.streams = std::move(stored.streams);
  m.images_bytes = stored.images_bytes;
  m.chunk_index = stored.chunk_index;
  if (remote) CEDANA_RETURN_IF_ERROR(remote->Collect(&m));
  if (options.before_commit) CEDANA_RETURN_IF_ERROR(options.before_commit(&m));

  // Commit. Left running, the tree was stopped while CRIU ran; otherwise it stays stopped until
  // the commit (then it is killed, or continued if the commit fails).
  if (progress) progress("committing", 0, 0);
  m.created_at_ms = NowMs();
  const auto committing = Clock::now();
  m.duration_ms = MsBetween(started, committing);
  m.frozen_ms = MsBetween(criu_started, options.leave_running ? dumped : committing);
  image::SignManifest(&m, node.cluster_key());
  CEDANA_RETURN_IF_ERROR(FaultAt("dump:packed"));
  {
    AsFileUser as_owner(store_uid, store_gid);
    CEDANA_RETURN_IF_ERROR(store->Commit(plan.ref, image::ManifestToJson(m)))
        << "committing checkpoint " << m.id;
  }
  rollback.Committed();
  if (remote) remote->Commit();
  const auto committed = Clock::now();
  (void)FaultAt("dump:committed");  // a pause only: past the commit nothing rolls back

  // Finish: the committed tree ends, and retention runs.
  if (!options.leave_running) {
    // Record why before killing, so that `ps` and the supervisor's exit record say
    // "checkpointed" rather than "killed".
    if (!target.workload_id.empty())
      (void)node.records().SaveEnd(target.workload_id, WorkloadEnd{m.id});
    if (!target.workload_id.empty()) StopSteps(node, target.workload_id);
    // The whole tree: a --pid target is no namespace init whose death would take the rest.
    node.processes().SignalTree(target.pid, SIGKILL);
    // Return only once it is gone and reaped: callers (the SLURM proxy) end the job next, and a
    // restore with the original pids (unprivileged mode) may follow at once.
    (void)node.processes().WaitUntilGone(target.pid, std::chrono::seconds(2));
    // Both ends of every connection are gone with the tree: no peer to keep the lock for. A
    // peer outside keeps it, so that its connection is not reset before the restore.
    if (tcp.mode == TcpMode::kEstablished && tcp.all_internal)
      if (Status s = node.processes().UndoNetworkLock(plan.images_dir + "/dump.log", 0); !s.ok())
        log::Warn("dump: checkpoint {}: undoing CRIU's network lock: {}", m.id, s.ToString());
  }
  {
    AsFileUser as_owner(store_uid, store_gid);
    if (Status s = image::ApplyRetention(*store, m.owner, m.label, cfg.node.checkpoint_keep);
        !s.ok())
      log::Warn("dump: retention for label {}: {}", m.label, s.ToString());
  }

  // "dump": how long CRIU ran, i.e. the longest the tree was frozen (a direct dump's CRIU
  // also waits for the store when the memory limit is reached).
  log::Info(
      "dump: checkpoint {} of pid {} (label {}, {} bytes stored, {}dump {} ms, total {} ms{}{})",
      m.id, target.pid, m.label, m.StoredBytes(),
      options.waited_ms > 0 ? fmt::format("waited {} ms for a slot, ", options.waited_ms) : "",
      MsBetween(criu_started, dumped), m.duration_ms, stored.note,
      storage::StreamMemoryNote(*store));
  DumpOutcome outcome{m, store->Describe() + "/" + plan.ref.Path(), {}};
  outcome.phases_ms = {{"queue", options.waited_ms},
                       {"prepare", MsBetween(started, criu_started)},
                       {"freeze", MsBetween(criu_started, dumped)},
                       {"store", MsBetween(dumped, committing)},
                       {"commit", MsBetween(committing, committed)},
                       {"finish", MsBetween(committed, Clock::now())}};
  return outcome;
}

}  // namespace

std::string DumpImagesName(const std::string& checkpoint_id) { return "dump-" + checkpoint_id; }

namespace {

// Checkpointer::Dump without the metrics.
Result<DumpOutcome> DumpAndTell(NodeContext& node, const Caller& caller, const DumpOptions& options,
                                const DumpProgress& progress) {
  // A workload that does not exist, is not the caller's or is not running: nothing to tell.
  CEDANA_ASSIGN_OR_RETURN(const DumpTarget target, ResolveDumpTarget(node, caller, options));
  Result<DumpOutcome> out = DumpResolved(node, target, options, progress);
  // A checkpoint of the job that did not happen: its owner sees why in the jobs list (the
  // job's stderr says it too, when the proxy asked); a wrong option is the caller's mistake.
  const Code code = out.has_value() ? Code::kOk : out.error().code();
  if (code == Code::kOk || code == Code::kInvalidArgument || target.workload_id.empty()) return out;
  const std::string text =
      fmt::format("checkpoint on {} {}: {}", ReasonPhrase(options.reason),
                  code == Code::kUnsupported ? "refused" : "failed", out.error().message());
  if (Status s = node.records().SaveNotice(target.workload_id, {text, NowMs()}); !s.ok())
    log::Warn("dump: recording the notice of workload {}: {}", target.workload_id, s.ToString());
  return out;
}

}  // namespace

Result<DumpOutcome> Checkpointer::Dump(const Caller& caller, const DumpOptions& options,
                                       const DumpProgress& progress) {
  Result<DumpOutcome> out = DumpAndTell(node_, caller, options, progress);
  node_.metrics().RecordDump(options.reason, out.has_value() ? OkStatus() : out.error(),
                             out.has_value() ? out->phases_ms : PhaseDurations{},
                             out.has_value() ? out->manifest.StoredBytes() : 0);
  return out;
}

// What a dump of `o` asks of the node (daemon/dump_queue.h): its tree's resident memory is
// about what CRIU writes; the dump itself holds its direct pack's buffer (which the S3 parts
// share), else the S3 parts, and the images too when the work dir is in memory.
DumpDemand DemandOf(NodeContext& node, const DumpOptions& o, int64_t deadline_ms) {
  constexpr uint64_t kDumpBaseBytes = 64ull << 20;  // CRIU, the packer's buffers
  pid_t root = o.pid;
  if (!o.workload_id.empty())
    if (auto state = node.records().LoadState(o.workload_id); state.has_value()) root = state->pid;
  DumpDemand d;
  d.key = o.workload_id.empty() ? fmt::format("pid {}", root) : o.workload_id;
  d.bytes = node.processes().ResidentBytes(root);
  d.memory_bytes = kDumpBaseBytes;
  const NodeConfig& cfg = node.config().node;
  if (cfg.checkpoint_direct) {
    d.memory_bytes += static_cast<uint64_t>(cfg.checkpoint_memory_limit_mib) << 20;
  } else {
    if (storage::IsS3Location(o.dir.empty() ? node.config().checkpoint_dir : o.dir))
      d.memory_bytes += StreamMemoryOf(cfg);
    if (fs::IsInMemoryFileSystem(cfg.work_dir)) d.memory_bytes += d.bytes;
  }
  // A deadline already past goes first, no earlier than "now" (the claim is the caller's own).
  d.deadline_ms = deadline_ms > 0 ? std::max(deadline_ms, UnixMillis()) : 0;
  return d;
}

}  // namespace cedana::daemon
