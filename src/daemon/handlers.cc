#include "daemon/handlers.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/unix_time.h"
#include "common/version.h"
#include "daemon/caller_files.h"
#include "daemon/checkpointer.h"
#include "daemon/mpi_scratch.h"
#include "daemon/slurm_job_registry.h"
#include "daemon/srun_steps.h"
#include "daemon/supervisor.h"
#include "engine/process_tree.h"
#include "image/checkpoint_listing.h"
#include "image/chunk_sweep.h"
#include "image/lineage.h"
#include "protocol/daemon_reply.h"

namespace cedana::daemon {
namespace {

using protocol::DaemonOp;
using protocol::DaemonRequest;
using protocol::Message;

protocol::WorkloadInfo WorkloadInfoOf(const NodeContext& node, const std::string& id) {
  protocol::WorkloadInfo w;
  w.id = id;
  auto spec = node.records().LoadSpec(id);
  auto state = node.records().LoadState(id);
  if (!spec.has_value() || !state.has_value()) return w;
  w.status = StatusName(state->status);
  // end.json is written just before a committed dump kills the workload.
  if (node.records().LoadEnd(id).has_value()) w.status = "checkpointed";
  w.label = spec->label;
  w.pid = state->pid;
  w.uid = spec->uid;
  w.user = UserName(spec->uid);
  w.argv = spec->argv;
  w.exit_code = state->exit_code;
  w.error = state->error;
  w.started_at_ms = state->started_at_ms;
  w.stdout_path = spec->stdout_path;
  w.restored_from = spec->restored_from;
  w.job_id = spec->job_id;
  return w;
}

// Request fields a non-root caller could use to make root act outside that caller's reach.
// (Their form was checked by ParseDaemonRequest; these checks need the node and the caller.)
// The checkpoint dir: only root picks another one than the configured dir.
Status CheckDir(const NodeContext& node, const Caller& caller, const std::string& dir) {
  if (caller.IsRoot() || dir.empty() || dir == node.config().checkpoint_dir) return OkStatus();
  return PermissionDeniedError(fmt::format(
      "only root chooses the checkpoint dir; {}'s checkpoints go to the configured one ({})",
      UserName(caller.uid), node.config().checkpoint_dir));
}

// A SLURM job id a workload is attached to must name one of the caller's jobs: slurmd
// registered it for the caller's uid (task/cedana, HandleSlurmJobStart). Root may name any.
Status CheckJobId(const NodeContext& node, const Caller& caller, const std::string& job_id) {
  if (job_id.empty() || caller.IsRoot()) return OkStatus();
  std::optional<uid_t> owner = node.slurm_jobs().OwnerOf(job_id);
  if (owner == caller.uid) return OkStatus();
  if (!owner.has_value())
    return PermissionDeniedError(fmt::format(
        "SLURM job {} was not registered on this node by slurmd (task/cedana registers each "
        "CEDANA_ENABLE job at launch: is task/cedana in slurm.conf's TaskPlugin, and was slurmd "
        "restarted after `cedana slurm setup`?)",
        job_id));
  return PermissionDeniedError(
      fmt::format("SLURM job {} is not a job of {}", job_id, UserName(caller.uid)));
}

// The job proxy whose cgroups the workload joins must be the caller's own process.
Status CheckOwnerPid(const Caller& caller, pid_t pid) {
  if (pid <= 0 || caller.IsRoot()) return OkStatus();
  struct stat st {};
  if (::stat(fmt::format("/proc/{}", pid).c_str(), &st) != 0 || st.st_uid != caller.uid)
    return PermissionDeniedError(fmt::format("process {} is not {}'s", pid, UserName(caller.uid)));
  return OkStatus();
}

// Output paths are opened as the caller later (supervisor); refuse what it could not open now,
// with a clear message, before anything starts.
Status CheckOutputPath(const Caller& caller, const std::string& path) {
  if (path.empty()) return OkStatus();
  return OpenOutputAs(path, caller.uid, caller.gid).error();
}

// What the node's site allows a job proxy at its job's time limit (docs/slurm.md, "Time
// limits"): from the daemon's config, which a job's environment cannot change.
protocol::TimeLimitGrant TimeLimitPolicy(const NodeContext& node) {
  const Config& c = node.config();
  return {c.node.slurm_requeue_on_timeout, c.node.slurm_max_restarts,
          c.node.slurm_timeout_margin_seconds};
}

protocol::StartedWorkload RestoredWorkload(const RestoreOutcome& r) {
  protocol::StartedWorkload w;
  w.id = r.workload_id;
  w.pid = r.pid;
  w.stdout_path = r.stdout_path;
  w.checkpoint_id = r.checkpoint_id;
  w.checkpoint_created_at_ms = r.checkpoint_created_at_ms;
  w.checkpoint_duration_ms = r.checkpoint_duration_ms;
  w.checkpoint_reason = r.checkpoint_reason;
  w.skipped = r.skipped;
  w.phases_ms = r.phases_ms;
  return w;
}

// SLURM_RESTART_COUNT in a job's environment: how often it was requeued before this run (SLURM
// sets it from the first requeue on). 0 when absent or not a number.
uint32_t RestartCountIn(const std::vector<std::string>& env) {
  constexpr std::string_view kVar = "SLURM_RESTART_COUNT=";
  for (const std::string& e : env) {
    if (e.rfind(kVar, 0) != 0) continue;
    uint32_t n = 0;
    const char* begin = e.data() + kVar.size();
    auto [end, ec] = std::from_chars(begin, e.data() + e.size(), n);
    return ec == std::errc() && end == e.data() + e.size() ? n : 0;
  }
  return 0;
}

// In its own PID namespace the workload still sees the node's /proc, where its own pids name
// other processes. UCX (MPICH's and OpenMPI's transport) opens a peer rank's shared memory
// through /proc/<peer pid>/fd unless told to use the segment's name: MPI_Init failed, or a
// rank crashed. Its pids also name OpenMPI's files, the same in every workload
// (daemon/mpi_scratch.h). A SLURM job's srun steps run outside the namespace and must see the
// environment they see without cedana: CEDANA_ADDED_ENV names what spank/cedana removes from
// their tasks' environment again.
void AddPidNamespaceEnv(WorkloadSpec* spec) {
  std::vector<std::string> added;
  const bool ucx_set = std::any_of(spec->env.begin(), spec->env.end(), [](const std::string& e) {
    return e.rfind("UCX_POSIX_USE_PROC_LINK=", 0) == 0;
  });
  if (!ucx_set) {
    spec->env.push_back("UCX_POSIX_USE_PROC_LINK=n");
    added.push_back("UCX_POSIX_USE_PROC_LINK");
  }
  // On a copy: the variables are set only once their directory is there.
  const std::string scratch = MpiScratchDirFor(spec->id);
  std::vector<std::string> env = spec->env;
  const std::vector<std::string> mpi_added = AddMpiScratchEnv(&env, scratch);
  if (!mpi_added.empty()) {
    if (Status s = PrepareMpiScratch(scratch, spec->uid, spec->gid); s.ok()) {
      spec->env = std::move(env);
      spec->mpi_scratch_dir = scratch;
      added.insert(added.end(), mpi_added.begin(), mpi_added.end());
    } else {
      log::Warn("run: workload {}: OpenMPI keeps its default file names: {}", spec->id,
                s.ToString());
    }
  }
  if (!added.empty())
    spec->env.push_back(fmt::format("CEDANA_ADDED_ENV={}", fmt::join(added, ",")));
}

// With restore_label (the SLURM job proxy), the newest good checkpoint of the label is restored
// if there is one; if none can be, the command starts fresh and the reason is returned.
Result<Message> HandleRun(NodeContext& node, const Caller& caller, const DaemonRequest& req) {
  std::string restore_error, fresh_reason;
  CEDANA_RETURN_IF_ERROR(CheckJobId(node, caller, req.job_id));
  CEDANA_RETURN_IF_ERROR(CheckOwnerPid(caller, req.owner_pid));
  CEDANA_RETURN_IF_ERROR(CheckOutputPath(caller, req.stdout_path));
  CEDANA_RETURN_IF_ERROR(CheckOutputPath(caller, req.stderr_path));
  const uint32_t restart_count = RestartCountIn(req.env);
  if (req.restore_label) {
    RestoreOptions o;
    o.label = req.label;
    o.stdout_path = req.stdout_path;
    o.stderr_path = req.stderr_path;
    o.job_id = req.job_id;
    o.restart_count = restart_count;
    o.owner_pid = req.owner_pid;
    o.job_env = req.env;
    o.callers_own_only = true;
    Result<RestoreOutcome> r = Checkpointer(node).Restore(caller, o, {});
    if (r.has_value()) {
      protocol::StartedWorkload w = RestoredWorkload(*r);
      w.label = o.label;
      w.time_limit = TimeLimitPolicy(node);
      return protocol::EncodeReply(w);
    }
    if (image::IsFinishedRun(r.error())) fresh_reason = r.error().message();
    else if (r.error().code() != Code::kNotFound) restore_error = r.error().message();
  }
  WorkloadSpec spec;
  spec.id = NewId("wl-");
  spec.argv = req.argv;
  if (spec.argv.empty()) return InvalidArgumentError("run: no command given");
  spec.label = req.label.empty() ? spec.id : req.label;
  spec.env = req.env;
  spec.cwd = req.cwd;
  spec.uid = caller.uid;
  spec.gid = caller.gid;
  spec.groups = GroupsOf(caller.uid, caller.gid);
  spec.unprivileged = node.RunsAsOwner(caller.uid);
  if (!spec.unprivileged) AddPidNamespaceEnv(&spec);
  spec.job_id = req.job_id;
  // A batch script's srun steps run through the relay, so that a checkpoint includes them.
  if (!spec.unprivileged && !spec.job_id.empty()) {
    Result<std::string> relay = SrunRelayDir();
    if (relay.has_value()) AddSrunRelay(*relay, &spec.env);
    else
      log::Warn("run: job {}: its srun steps cannot be checkpointed: {}", spec.job_id,
                relay.error().message());
  }
  spec.restart_count = restart_count;
  spec.created_at_ms = NowMs();
  spec.stdout_path = req.stdout_path;
  if (spec.stdout_path.empty()) spec.stdout_path = node.records().DirOf(spec.id) + "/output.log";
  spec.stderr_path = req.stderr_path.empty() ? spec.stdout_path : req.stderr_path;
  spec.owner_pid = req.owner_pid;
  spec.slurm_script = req.slurm_script;
  if (Status s = node.records().Create(spec); !s.ok()) {
    RemoveMpiScratchIfEmpty(spec.mpi_scratch_dir);
    return s;
  }
  // Its label had checkpoints, and none could be restored: the jobs list says so (the proxy
  // writes it to the job's stderr).
  if (!restore_error.empty())
    (void)node.records().SaveNotice(
        spec.id, {"started fresh: no checkpoint of label " + spec.label + " could be restored (" +
                      restore_error + ")",
                  NowMs()});
  Result<SupervisorStarted> started = node.launcher().Launch(node.records(), spec.id, 30);
  if (!started.has_value()) {
    (void)node.records().Remove(spec.id);
    RemoveMpiScratchIfEmpty(spec.mpi_scratch_dir);
    return started.error();
  }
  protocol::StartedWorkload w;
  w.id = spec.id;
  w.pid = started->pid;
  w.label = spec.label;
  w.stdout_path = spec.stdout_path;
  w.restore_error = restore_error;
  w.fresh_reason = fresh_reason;
  w.time_limit = TimeLimitPolicy(node);
  return protocol::EncodeReply(w);
}

Result<Message> HandlePs(NodeContext& node, const Caller& caller) {
  CEDANA_ASSIGN_OR_RETURN(auto ids, node.records().List());
  protocol::WorkloadList list;
  for (const auto& id : ids) {
    protocol::WorkloadInfo w = WorkloadInfoOf(node, id);
    // A workload whose records cannot be read is listed to root only.
    if (caller.IsRoot() || (!w.status.empty() && w.uid == caller.uid))
      list.workloads.push_back(std::move(w));
  }
  return protocol::EncodeReply(list);
}

Result<Message> HandleInspect(NodeContext& node, const Caller& caller, const DaemonRequest& req) {
  const std::string& id = req.id;
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, node.records().LoadSpec(id));
  CEDANA_RETURN_IF_ERROR(CheckOwner(caller, spec.uid, "workload " + id));
  return protocol::EncodeReply(WorkloadInfoOf(node, id));
}

Result<Message> HandleKill(NodeContext& node, const Caller& caller, const DaemonRequest& req) {
  const std::string& id = req.id;
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, node.records().LoadSpec(id));
  CEDANA_RETURN_IF_ERROR(CheckOwner(caller, spec.uid, "workload " + id));
  CEDANA_ASSIGN_OR_RETURN(WorkloadState state, node.records().LoadState(id));
  if (state.status != WorkloadStatus::kRunning)
    return FailedPreconditionError(
        fmt::format("workload {} is {}, not running", id, StatusName(state.status)));
  int sig = req.signal_number;
  // Whatever the workload does with the signal, its run did not end by itself.
  if (Status s = fs::WriteFileAtomic(node.records().KillMarker(id), ""); !s.ok())
    log::Warn("kill: workload {}: {}", id, s.ToString());
  // The workload is the init of its PID namespace: SIGKILL ends the whole namespace; other
  // signals reach it only if it handles them, so they go to every process of the tree.
  if (sig == SIGKILL) {
    if (::kill(state.pid, SIGKILL) != 0) return ErrnoStatus(errno, "killing workload " + id);
  } else {
    node.processes().SignalTree(state.pid, sig);
  }
  return protocol::EncodeReply(protocol::Signalled{id, sig});
}

protocol::CheckpointSummary SummaryOf(const image::Manifest& m) {
  protocol::CheckpointSummary c;
  c.id = m.id;
  c.label = m.label;
  c.owner = m.owner;
  c.owner_uid = m.owner_uid;
  c.created_at_ms = m.created_at_ms;
  c.duration_ms = m.duration_ms;
  c.reason = m.reason;
  c.restart_count = m.restart_count;
  c.frozen_ms = m.frozen_ms;
  c.stored_bytes = m.StoredBytes();
  c.images_bytes = m.images_bytes;
  c.codec = std::string(CodecName(m.codec));
  c.streams = static_cast<int>(m.streams.size());
  c.raw_streams = static_cast<int>(std::count_if(m.streams.begin(), m.streams.end(),
                                                 [](const auto& s) { return s.stored_raw; }));
  c.node = m.node;
  c.job_id = m.job_id;
  c.workload_id = m.workload_id;
  return c;
}

// `dump --pid P` of a process the daemon manages: P the root of a running workload is that
// workload (its label, its lineage, its stop); P inside one is refused, since a checkpoint of a
// part of a tree would kill that part under the workload. Other pids are foreign trees.
// Another user's workloads are left alone (their pids fail the ownership check as foreign).
Status ResolveManagedPid(const NodeContext& node, const Caller& caller, DumpOptions* o) {
  if (o->pid == 0) return OkStatus();
  CEDANA_ASSIGN_OR_RETURN(auto ids, node.records().List());
  for (const auto& id : ids) {
    Result<WorkloadSpec> spec = node.records().LoadSpec(id);
    if (!spec.has_value() || (!caller.IsRoot() && spec->uid != caller.uid)) continue;
    Result<WorkloadState> state = node.records().LoadState(id);
    if (!state.has_value() || state->status != WorkloadStatus::kRunning || state->pid <= 0)
      continue;
    if (state->pid == o->pid) {
      log::Info("dump: pid {} is the root of workload {}; dumping the workload", o->pid, id);
      o->workload_id = id;
      o->pid = 0;
      return OkStatus();
    }
    Result<std::vector<pid_t>> tree = engine::ProcessTreeOf(state->pid);
    if (tree.has_value() && std::find(tree->begin(), tree->end(), o->pid) != tree->end())
      return FailedPreconditionError(fmt::format(
          "pid {} is a process of workload {} (its root is pid {}): dump the whole workload with "
          "`cedana dump {}`",
          o->pid, id, state->pid, id));
  }
  return OkStatus();
}

// Waits for the dump's turn (daemon/dump_queue.h), telling the caller when it is expected to
// finish: a job proxy tells its job when that is past the grace time. While it waits, the first
// dump of a workload counts against no connection cap (ConnectionLimits::Park).
DumpQueue::Slot WaitForDumpSlot(NodeContext& node, const Caller& caller, const DumpOptions& o,
                                int64_t deadline_ms, const SendProgress& send) {
  const DumpDemand demand = DemandOf(node, o, deadline_ms);
  bool parked = false;
  DumpQueue::Slot slot = node.dump_queue().Enter(demand, [&](const DumpForecast& f) {
    if (f.ahead > 0)
      log::Info("dump: {} ({} MiB) waits behind {} dump(s) ({} MiB); expected to end in {:.1f} s{}",
                demand.key, demand.bytes >> 20, f.ahead, f.ahead_bytes >> 20,
                (f.finish_ms - UnixMillis()) / 1000.0, f.fits ? "" : ", after its deadline");
    send({{"type", "progress"},
          {"phase", "queued"},
          {"ahead", f.ahead},
          {"ahead_bytes", f.ahead_bytes},
          {"bytes", demand.bytes},
          {"finish_ms", f.finish_ms},
          {"deadline_ms", demand.deadline_ms},
          {"fits", f.fits}});
    if (f.first_of_key && f.ahead > 0) {
      node.connection_limits().Park(caller.uid);
      parked = true;
    }
  });
  if (parked) node.connection_limits().Unpark(caller.uid);
  return slot;
}

Result<Message> HandleDump(NodeContext& node, const Caller& caller, const DaemonRequest& req,
                           const SendProgress& send) {
  DumpOptions o;
  o.workload_id = req.id;
  o.pid = req.pid;
  o.leave_running = req.leave_running;
  o.dir = req.dir;
  o.compression = req.compression;
  o.tcp = req.tcp;
  o.streams = req.streams;
  o.label = req.label;
  if (!req.reason.empty()) o.reason = req.reason;
  CEDANA_RETURN_IF_ERROR(CheckDir(node, caller, o.dir));
  if (o.workload_id.empty() == (o.pid == 0))
    return InvalidArgumentError("dump: give either a workload id or --pid");
  CEDANA_RETURN_IF_ERROR(ResolveManagedPid(node, caller, &o));
  DumpQueue::Slot slot = WaitForDumpSlot(node, caller, o, req.deadline_ms, send);
  o.waited_ms = slot.waited_ms();
  CEDANA_ASSIGN_OR_RETURN(
      DumpOutcome out,
      Checkpointer(node).Dump(caller, o, [&](const std::string& phase, uint64_t d, uint64_t t) {
        send({{"type", "progress"}, {"phase", phase}, {"done", d}, {"total", t}});
      }));
  slot.Succeeded();
  protocol::CheckpointSummary summary = SummaryOf(out.manifest);
  summary.location = out.location;
  summary.phases_ms = out.phases_ms;
  return protocol::EncodeReply(summary);
}

Result<Message> HandleRestore(NodeContext& node, const Caller& caller, const DaemonRequest& req,
                              const SendProgress& send) {
  RestoreOptions o;
  o.checkpoint_id = req.checkpoint_id;
  o.label = req.label;
  o.dir = req.dir;
  o.stdout_path = req.stdout_path;
  o.stderr_path = req.stderr_path;
  o.job_id = req.job_id;
  o.owner_pid = req.owner_pid;
  CEDANA_RETURN_IF_ERROR(CheckOwnerPid(caller, o.owner_pid));
  CEDANA_RETURN_IF_ERROR(CheckDir(node, caller, o.dir));
  CEDANA_RETURN_IF_ERROR(CheckJobId(node, caller, o.job_id));
  CEDANA_RETURN_IF_ERROR(CheckOutputPath(caller, o.stdout_path));
  CEDANA_RETURN_IF_ERROR(CheckOutputPath(caller, o.stderr_path));
  CEDANA_ASSIGN_OR_RETURN(
      RestoreOutcome out,
      Checkpointer(node).Restore(caller, o, [&](const std::string& phase, uint64_t d, uint64_t t) {
        send({{"type", "progress"}, {"phase", phase}, {"done", d}, {"total", t}});
      }));
  return protocol::EncodeReply(RestoredWorkload(out));
}

Result<Message> HandleCheckpoints(NodeContext& node, const Caller& caller,
                                  const DaemonRequest& req) {
  CEDANA_RETURN_IF_ERROR(CheckDir(node, caller, req.dir));
  // Unprivileged mode: a user's own checkpoints are read with that user's identity.
  const auto [fs_uid, fs_gid] = node.StoreIdentityFor(caller.uid, caller.gid);
  AsFileUser as_caller(fs_uid, fs_gid);
  CEDANA_ASSIGN_OR_RETURN(auto store, node.OpenStore(req.dir));
  std::optional<std::string> owner, label;
  if (!caller.IsRoot()) owner = UserName(caller.uid);
  if (!req.label.empty()) label = req.label;
  CEDANA_ASSIGN_OR_RETURN(auto manifests, image::ListManifests(*store, owner, label));
  protocol::CheckpointList list;
  list.dir = store->Describe();
  image::LineageEnds ends(*store);
  for (const auto& m : manifests) {
    protocol::CheckpointSummary s = SummaryOf(m);
    s.state = image::VerifyManifest(m, node.cluster_key()).ok() ? "good" : "unverified";
    // "finished": made by a run that has ended by itself (not resumed by label any more).
    s.run = image::OfFinishedRun(m.created_at_ms, ends.OrOpen(m.owner, m.label, "checkpoints"))
                ? "finished"
                : "open";
    list.checkpoints.push_back(std::move(s));
  }
  return protocol::EncodeReply(list);
}

Result<Message> HandleDeleteCheckpoint(NodeContext& node, const Caller& caller,
                                       const DaemonRequest& req) {
  CEDANA_RETURN_IF_ERROR(CheckDir(node, caller, req.dir));
  // Unprivileged mode: a user's own checkpoints are read with that user's identity.
  const auto [fs_uid, fs_gid] = node.StoreIdentityFor(caller.uid, caller.gid);
  AsFileUser as_caller(fs_uid, fs_gid);
  CEDANA_ASSIGN_OR_RETURN(auto store, node.OpenStore(req.dir));
  CEDANA_ASSIGN_OR_RETURN(auto found, image::FindById(*store, req.checkpoint_id));
  CEDANA_RETURN_IF_ERROR(
      CheckOwner(caller, found.second.owner_uid, "checkpoint " + found.second.id));
  CEDANA_RETURN_IF_ERROR(image::RemoveCheckpoint(*store, found.first));
  return protocol::EncodeReply(protocol::Deleted{found.second.id});
}

// From task_cedana.so inside slurmd, which runs as root: "slurmd is launching job J of uid U".
Result<Message> HandleSlurmJobStart(NodeContext& node, const Caller& caller,
                                    const DaemonRequest& req) {
  if (!caller.IsRoot())
    return PermissionDeniedError("only slurmd (root) registers SLURM jobs with the node daemon");
  const std::string& job_id = req.job_id;
  uid_t uid = req.uid;
  CEDANA_RETURN_IF_ERROR(node.slurm_jobs().Register(job_id, uid));
  log::Info("slurm: job {} of {} registered by slurmd", job_id, UserName(uid));
  return protocol::EncodeReply(protocol::SlurmJobRegistered{job_id, uid});
}

}  // namespace

Result<Message> HandleRequest(NodeContext& node, const Caller& caller, const Message& request,
                              const SendProgress& send_progress) {
  // Every field is typed and checked before any handler looks at it (or at the node).
  CEDANA_ASSIGN_OR_RETURN(DaemonRequest req, protocol::ParseDaemonRequest(request));
  switch (req.op) {
    case DaemonOp::kPing:
      return protocol::EncodeReply(protocol::DaemonInfo{
          kVersion, node.engine().settings().binary, node.criu_version(),
          node.engine().settings().no_breakpoints, node.config().checkpoint_dir});
    case DaemonOp::kRun: return HandleRun(node, caller, req);
    case DaemonOp::kPs: return HandlePs(node, caller);
    case DaemonOp::kKill: return HandleKill(node, caller, req);
    case DaemonOp::kInspect: return HandleInspect(node, caller, req);
    case DaemonOp::kDump: return HandleDump(node, caller, req, send_progress);
    case DaemonOp::kRestore: return HandleRestore(node, caller, req, send_progress);
    case DaemonOp::kCheckpoints: return HandleCheckpoints(node, caller, req);
    case DaemonOp::kCheckpointsDelete: return HandleDeleteCheckpoint(node, caller, req);
    case DaemonOp::kSlurmJobStart: return HandleSlurmJobStart(node, caller, req);
    case DaemonOp::kSrun: return HandleSrun(node, caller, req);
    case DaemonOp::kStepTask: return HandleStepTask(node, caller, req);
  }
  return InternalError(fmt::format("op {} has no handler", protocol::DaemonOpName(req.op)));
}

}  // namespace cedana::daemon
