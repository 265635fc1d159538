// Checkpointer::Restore: finds the candidates (a checkpoint by id, or a label's newest first),
// then one RestoreAttempt per candidate until one restores; a direct attempt that CRIU failed
// on is tried once more after a full unpack.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/fault_point.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/scope_exit.h"
#include "daemon/caller_files.h"
#include "daemon/checkpointer.h"
#include "daemon/lineage_recorder.h"
#include "daemon/mpi_scratch.h"
#include "daemon/restore_images.h"
#include "daemon/slurm_spool.h"
#include "daemon/srun_steps.h"
#include "daemon/step_parts.h"
#include "daemon/supervisor.h"
#include "daemon/tcp_policy.h"
#include "engine/time_wait.h"
#include "image/checkpoint_listing.h"
#include "image/image_creds.h"
#include "image/lineage.h"
#include "slurm/slurm_install.h"

namespace cedana::daemon {
namespace {

using Candidate = std::pair<storage::CheckpointRef, image::Manifest>;

Result<std::vector<Candidate>> FindCandidates(NodeContext& node, const Caller& caller,
                                              storage::CheckpointStore& store,
                                              const RestoreOptions& o) {
  std::vector<Candidate> out;
  if (!o.checkpoint_id.empty()) {
    CEDANA_ASSIGN_OR_RETURN(Candidate c, image::FindById(store, o.checkpoint_id));
    CEDANA_RETURN_IF_ERROR(CheckOwner(caller, c.second.owner_uid, "checkpoint " + c.second.id));
    out.push_back(std::move(c));
    return out;
  }
  CEDANA_RETURN_IF_ERROR(ValidateLabel(o.label));
  std::optional<std::string> owner;
  if (!caller.IsRoot() || o.callers_own_only) owner = UserName(caller.uid);
  CEDANA_ASSIGN_OR_RETURN(auto manifests, image::ListManifests(store, owner, o.label));
  // A run that ended by itself finished its lineage: its checkpoints are not resumed by label.
  image::LineageEnds ends(store);
  std::optional<image::LineageEnd> finished;
  for (auto& m : manifests) {
    // The directory names the owner; the signed manifest's uid decides.
    if (owner && m.owner_uid != caller.uid) continue;
    CEDANA_ASSIGN_OR_RETURN(std::optional<image::LineageEnd> end, ends.Of(m.owner, o.label));
    if (image::OfFinishedRun(m.created_at_ms, end)) {
      finished = end;
      continue;
    }
    storage::CheckpointRef ref{m.owner, m.label, m.id};
    out.emplace_back(ref, std::move(m));
  }
  if (out.empty() && finished) return image::FinishedRunError(*finished);
  if (out.empty())
    return NotFoundError(fmt::format("no checkpoint of label {} in {}", o.label, store.Describe()));
  return out;
}

// A SLURM batch script the dumped bash had open must exist at its old path for CRIU (it
// restores files by path and checks their size). A requeued job has it there again; for a
// resubmitted job it is written back from the checkpoint, only where slurmd keeps the dumped
// job's script (slurm_spool.h). Returns the path it wrote, or "".
Result<std::string> PutBackSlurmScript(const NodeContext& node, const image::Manifest& m,
                                       WorkloadSpec* spec) {
  if (!m.workload.contains("slurm_script")) return std::string();
  std::string path = m.workload["slurm_script"].value("path", "");
  spec->slurm_script = path;
  if (path.empty() || fs::Exists(path)) return std::string();
  std::string conf_path = slurm::DefaultSlurmInstallPaths().slurm_conf;
  Result<std::string> conf = fs::ReadFile(conf_path);
  if (!conf.has_value())
    return conf.error().WithContext("reading SlurmdSpoolDir from " + conf_path +
                                    " to put the batch script back");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string spool = SlurmdSpoolDir(*conf, node.hostname(), host);
  // CRIU checks size and mode of the file it reopens: both must be as dumped.
  const auto& script = m.workload["slurm_script"];
  CEDANA_RETURN_IF_ERROR(WriteSlurmScript(spool, m.job_id, path, HexDecode(script.value("hex", "")),
                                          script.value("mode", 0700u), m.owner_uid, m.owner_gid));
  return path;
}

// The workload a checkpoint is restored as: what the checkpoint recorded, with the request's
// output paths, job and restart count, and the node's CRIU settings.
Result<WorkloadSpec> RestoredSpec(const NodeContext& node, const image::Manifest& m,
                                  const RestoreOptions& o, const std::string& images_dir) {
  WorkloadSpec spec;
  spec.id = NewId("wl-");
  spec.label = m.label;
  spec.mode = WorkloadMode::kRestore;
  spec.argv = m.workload.value("argv", std::vector<std::string>{});
  spec.cwd = m.workload.value("cwd", "/");
  spec.uid = m.owner_uid;
  spec.gid = m.owner_gid;
  spec.job_id = o.job_id.empty() ? m.job_id : o.job_id;
  spec.restart_count = o.restart_count;
  spec.created_at_ms = NowMs();
  spec.stdout_path = o.stdout_path.empty() ? m.workload.value("stdout_path", "") : o.stdout_path;
  if (spec.stdout_path.empty()) spec.stdout_path = node.records().DirOf(spec.id) + "/output.log";
  spec.stderr_path = !o.stderr_path.empty()   ? o.stderr_path
                     : !o.stdout_path.empty() ? o.stdout_path
                                              : m.workload.value("stderr_path", spec.stdout_path);
  spec.images_dir = images_dir;
  spec.restored_from = m.id;
  spec.dumped_stdout_ino = m.workload.value("stdout_ino", uint64_t{0});
  spec.dumped_stderr_ino = m.workload.value("stderr_ino", uint64_t{0});
  CEDANA_ASSIGN_OR_RETURN(TcpMode tcp, ParseTcpModeName(m.workload.value("tcp", "")));
  spec.restore_tcp = TcpModeName(tcp);
  spec.step_pipes = StepPipesOf(m.workload.value("steps", nlohmann::json::array()));
  spec.mpi_scratch_dir = m.workload.value("mpi_scratch_dir", "");
  if (!spec.mpi_scratch_dir.empty() && !IsMpiScratchDir(spec.mpi_scratch_dir))
    return InvalidArgumentError(
        fmt::format("checkpoint {} names {} for OpenMPI's files, which is no directory "
                    "the node daemon makes",
                    m.id, spec.mpi_scratch_dir));
  const engine::CriuSettings& criu = node.engine().settings();
  spec.criu_binary = criu.binary;
  spec.criu_timeout_seconds = static_cast<int>(criu.timeout.count());
  spec.criu_no_breakpoints = criu.no_breakpoints;
  spec.owner_pid = o.owner_pid;
  spec.env = o.job_env;  // not the restored processes' (CRIU restores theirs): this run's
  spec.unprivileged = node.RunsAsOwner(m.owner_uid);
  // The owner's groups now: CRIU opens the images' files with them (and runs with them in
  // unprivileged mode), so a restore opens only what the owner could open at this moment.
  if (m.owner_uid != 0) spec.groups = GroupsOf(m.owner_uid, m.owner_gid);
  return spec;
}

// One attempt at restoring one checkpoint, with one way of reading its images
// (daemon/restore_images.h). Steps: verify the manifest, unpack (until CRIU may start), check
// credentials, record the workload, launch its supervisor (which has CRIU restore it), and for a
// direct restore verify the rest before the tree runs. The images dir is removed in every
// case; a workload record is removed unless the restore succeeded.
class RestoreAttempt {
 public:
  RestoreAttempt(NodeContext& node, storage::CheckpointStore& store, const Candidate& candidate,
                 const RestoreOptions& options, const RestoreProgress& progress)
      : node_(node), store_(store), c_(candidate), o_(options), progress_(progress) {}

  // `direct`: DirectIfPossible, else UnpackedFirst.
  Result<RestoreOutcome> Run(bool direct);
  // CRIU failed in a direct restore: after a full unpack it may work (a plain restore
  // verifies every stream before CRIU starts, so damaged data fails there, and anything the
  // direct restore alone cannot do works).
  bool criu_failed_direct() const { return criu_failed_direct_; }

 private:
  NodeContext& node_;
  storage::CheckpointStore& store_;
  const Candidate& c_;
  const RestoreOptions& o_;
  const RestoreProgress& progress_;
  bool criu_failed_direct_ = false;
};

Result<RestoreOutcome> RestoreAttempt::Run(bool direct) {
  const auto& [ref, m] = c_;
  CEDANA_RETURN_IF_ERROR(image::VerifyManifest(m, node_.cluster_key()));
  // A step's tasks on other nodes resume from their own parts: all of them must be there.
  CEDANA_RETURN_IF_ERROR(
      CheckPartsCommitted(store_, m.owner, m.workload.value("steps", nlohmann::json::array())));
  const auto began = std::chrono::steady_clock::now();
  // Not named after the checkpoint: CRIU reaches a direct restore's images through a unix
  // socket in this dir (107 bytes at most), and the id's 25 bytes kept work dirs of 47 to 70
  // bytes from restoring directly.
  const std::string images_name = "restore-" + NewId("");
  const std::string images_dir = node_.config().node.work_dir + "/" + images_name;
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, RestoredSpec(node_, m, o_, images_dir));
  node_.ClaimWorkDir(images_name);
  ScopeExit remove_images([&] { node_.RetireWorkDir(images_name); });
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(images_dir, 0700));
  // Unprivileged mode: the owner's CRIU reads the images, and the checkpoint files are read with
  // the owner's file-system identity (root_squash NFS).
  if (spec.unprivileged && ::chown(images_dir.c_str(), m.owner_uid, m.owner_gid) != 0)
    return ErrnoStatus(errno, "giving the images dir " + images_dir + " to " + m.owner);

  // Unpack. A direct restore's unpack reports from its threads while this one goes on.
  std::mutex progress_mu;
  auto say = [&](const std::string& phase, uint64_t d, uint64_t t) {
    std::lock_guard<std::mutex> lock(progress_mu);
    if (progress_) progress_(phase, d, t);
  };
  RestoreImagesSetup setup;
  setup.store = &store_;
  setup.ref = ref;
  setup.manifest = &m;
  setup.images_dir = images_dir;
  std::tie(setup.store_uid, setup.store_gid) = node_.StoreIdentityFor(m.owner_uid, m.owner_gid);
  setup.progress = [&](uint64_t d, uint64_t t) { say("unpacking", d, t); };
  std::unique_ptr<RestoreImages> images =
      direct ? DirectIfPossible(std::move(setup)) : UnpackedFirst(std::move(setup));
  CEDANA_RETURN_IF_ERROR(images->Unpack());
  spec.direct_restore = images->direct();
  const auto unpacked = std::chrono::steady_clock::now();

  // Check credentials: also checked at dump; again here for checkpoints made before that check
  // existed: CRIU would recreate whatever credentials the images hold (docs/security.md, D8).
  CEDANA_RETURN_IF_ERROR(image::CheckImagesOwnedBy(images_dir, m.owner_uid, m.owner_gid))
      << "checkpoint " << m.id << " refused";

  // Record the workload, with what CRIU needs in place: OpenMPI's files where the restored
  // processes look for them (daemon/mpi_scratch.h), the batch script at its old path.
  if (!spec.mpi_scratch_dir.empty())
    CEDANA_RETURN_IF_ERROR(PrepareMpiScratch(spec.mpi_scratch_dir, spec.uid, spec.gid))
        << "restoring checkpoint " << m.id;
  CEDANA_ASSIGN_OR_RETURN(std::string placed_script, PutBackSlurmScript(node_, m, &spec));
  ScopeExit remove_script([&] {
    // CRIU has the file open in the restored bash now (or failed): the path may go.
    if (!placed_script.empty()) {
      ::unlink(placed_script.c_str());
      ::rmdir(std::filesystem::path(placed_script).parent_path().c_str());
    }
  });
  // Neither the record nor the marker below waits for the disk: the streams' reads are queued
  // there now, and both describe processes that a machine crash would end anyway (a daemon that
  // stops finds them in the page cache).
  CEDANA_RETURN_IF_ERROR(node_.records().Create(spec, fs::Durability::kUntilCrash));
  bool keep_record = false;
  ScopeExit remove_record([&] {
    if (!keep_record) (void)node_.records().Remove(spec.id);
  });
  if (images->direct())
    CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(node_.records().VerifyingMarker(spec.id), m.id, 0600,
                                               fs::Durability::kUntilCrash));
  // The tree's own connections closed shortly before the checkpoint may hold its ports in
  // TIME_WAIT, and CRIU could not bind them (engine/time_wait.h).
  if (Result<int> ended = engine::EndTimeWait(m.workload.value("tcp_ports", std::set<uint16_t>{}));
      !ended.has_value())
    log::Warn("restore: checkpoint {}: clearing its TCP ports: {}", m.id, ended.error().ToString());
  else if (*ended > 0)
    log::Info("restore: checkpoint {}: ended {} TIME_WAIT sockets on its TCP ports", m.id, *ended);

  // Launch.
  const auto prepared = std::chrono::steady_clock::now();
  say("restoring", 0, 0);
  if (images->direct()) {
    std::optional<std::pair<uid_t, gid_t>> criu_user;
    if (spec.unprivileged) criu_user.emplace(m.owner_uid, m.owner_gid);
    CEDANA_RETURN_IF_ERROR(images->Serve(criu_user));
  }
  Result<SupervisorStarted> started =
      node_.launcher().Launch(node_.records(), spec.id, spec.criu_timeout_seconds + 30);
  const auto launched = std::chrono::steady_clock::now();
  if (!started.has_value()) {
    criu_failed_direct_ = images->direct();
    // An unpack that stopped by itself (an altered stream) is why CRIU found no more data.
    if (Status unpack = images->Failure(); !unpack.ok())
      return unpack.WithContext("direct restore stopped before CRIU could finish");
    return started.error();
  }

  // Verify the rest (direct): CRIU left the tree stopped; it runs only once every byte CRIU
  // read is verified.
  if (images->direct()) {
    (void)FaultAt("restore:unverified");  // a pause only: the tree below must be dealt with
    if (Status verified = images->Verified(); !verified.ok()) {
      node_.processes().SignalTree(started->pid, SIGKILL);
      // Nothing half-restored stays behind: once the supervisor has seen the kill and exited,
      // the workload's record goes too.
      (void)node_.processes().WaitUntilGone(started->supervisor_pid, std::chrono::seconds(10));
      return verified.WithContext("restored workload " + spec.id + " killed before it ran");
    }
    node_.processes().SignalTree(started->pid, SIGCONT);
    ::unlink(node_.records().VerifyingMarker(spec.id).c_str());
  }
  const auto verified = std::chrono::steady_clock::now();
  keep_record = true;
  // The tree runs: its srun steps start again, and their task proxies attach to their tasks.
  ResumeSteps(node_, spec, started->pid, m.workload.value("steps", nlohmann::json::array()));
  // "unpack": verifying and unpacking the streams, and the rest of "total" is mostly CRIU's;
  // "direct, heads": until CRIU could start, and "total" includes the rest of the unpack.
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  // "read in place": pages images CRIU read from the stored streams itself (no pipe).
  const size_t in_place = spec.direct_restore ? images->ImagesInPlace() : 0;
  log::Info("restore: checkpoint {} restored as workload {} (pid {}, {} {} ms, total {} ms{}{})",
            m.id, spec.id, started->pid, spec.direct_restore ? "direct, heads" : "unpack",
            ms(unpacked - began), ms(std::chrono::steady_clock::now() - began),
            in_place > 0 ? fmt::format(", {} images read in place", in_place) : "",
            storage::StreamMemoryNote(store_));
  RestoreOutcome outcome;
  outcome.workload_id = spec.id;
  outcome.pid = started->pid;
  outcome.checkpoint_id = m.id;
  outcome.checkpoint_duration_ms = m.duration_ms;
  outcome.checkpoint_created_at_ms = m.created_at_ms;
  outcome.checkpoint_reason = m.reason;
  outcome.stdout_path = spec.stdout_path;
  outcome.phases_ms = {{"unpack", ms(unpacked - began)},
                       {"prepare", ms(prepared - unpacked)},
                       {"restore", ms(launched - prepared)},
                       {"verify", ms(verified - launched)}};
  return outcome;
}

// The candidates in order until one restores (Checkpointer::Restore without the metrics).
Result<RestoreOutcome> RestoreFirstGood(NodeContext& node, const Caller& caller,
                                        const RestoreOptions& options,
                                        const RestoreProgress& progress) {
  if (options.checkpoint_id.empty() == options.label.empty())
    return InvalidArgumentError("give either a checkpoint id or --label, not both or neither");
  CEDANA_ASSIGN_OR_RETURN(auto store, node.OpenStore(options.dir));
  // Runs of this node that just ended by themselves count before a label is resumed.
  if (!options.label.empty())
    if (Status s = RecordFinishedRuns(node); !s.ok())
      log::Warn("restore: lineage: {}", s.ToString());
  std::vector<Candidate> candidates;
  {
    // A user's own checkpoints are listed with that user's identity in unprivileged mode.
    const auto [uid, gid] = node.StoreIdentityFor(caller.uid, caller.gid);
    AsFileUser as(uid, gid);
    CEDANA_ASSIGN_OR_RETURN(candidates, FindCandidates(node, caller, *store, options));
  }
  std::vector<std::string> skipped;
  Status last;
  for (const auto& c : candidates) {
    RestoreAttempt direct(node, *store, c, options, progress);
    Result<RestoreOutcome> r = direct.Run(true);
    if (!r.has_value() && direct.criu_failed_direct()) {
      log::Warn("restore: direct restore of {} failed ({}); restoring it after a full unpack",
                c.second.id, r.error().ToString());
      Status direct_error = r.error();
      r = RestoreAttempt(node, *store, c, options, progress).Run(false);
      // The first failure is the one that says why (a retry may only find the failed attempt's
      // pids not yet free).
      if (!r.has_value())
        r = Status(direct_error.code(),
                   direct_error.message() +
                       "; restoring it after a full unpack failed too: " + r.error().message());
    }
    if (r.has_value()) {
      r->skipped = skipped;
      return r;
    }
    last = r.error().WithContext("checkpoint " + c.second.id);
    log::Warn("restore: {}", last.ToString());
    skipped.push_back(fmt::format("{}: {}", c.second.id, r.error().message()));
  }
  if (candidates.size() == 1) return last;
  std::string all;
  for (const auto& s : skipped) all += "\n  " + s;
  return Status(last.code(),
                fmt::format("no checkpoint of label {} could be restored:{}", options.label, all));
}

}  // namespace

Result<RestoreOutcome> Checkpointer::Restore(const Caller& caller, const RestoreOptions& options,
                                             const RestoreProgress& progress) {
  Result<RestoreOutcome> out = RestoreFirstGood(node_, caller, options, progress);
  node_.metrics().RecordRestore(out.has_value() ? out->checkpoint_reason : "",
                                out.has_value() ? OkStatus() : out.error(),
                                out.has_value() ? out->phases_ms : PhaseDurations{});
  return out;
}

}  // namespace cedana::daemon
