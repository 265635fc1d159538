#include "daemon/dump_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "common/checkpoint_reason.h"
#include "common/checkpoint_streams.h"
#include "common/fault_point.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/scope_exit.h"
#include "common/unique_fd.h"
#include "common/unix_time.h"
#include "daemon/caller_files.h"
#include "daemon/dump_journal.h"
#include "daemon/tcp_policy.h"
#include "engine/network_lock.h"
#include "engine/process_tree.h"
#include "image/catalog.h"
#include "image/image_creds.h"
#include "image/pack.h"
#include "image/stream_pack.h"
#include "storage/checkpoint_id.h"

namespace cedana::daemon {
namespace {

constexpr size_t kMaxScriptBytes = 4 << 20;

// What is being dumped, resolved from the options.
struct Target {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string label;
  std::string workload_id;
  std::string job_id;
  std::string tcp;  // the workload's own CEDANA_CHECKPOINT_TCP, if it has one
  uint32_t restart_count = 0;
  nlohmann::json workload;  // what a restore needs (manifest.workload)
};

Result<Target> ResolveTarget(Node& node, const Caller& caller, const DumpOptions& o) {
  Target t;
  if (!o.workload_id.empty()) {
    CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, node.records().LoadSpec(o.workload_id));
    CEDANA_ASSIGN_OR_RETURN(WorkloadState state, node.records().LoadState(o.workload_id));
    CEDANA_RETURN_IF_ERROR(CheckOwner(caller, spec.uid, "workload " + spec.id));
    if (state.status != WorkloadStatus::kRunning)
      return FailedPreconditionError(
          fmt::format("workload {} is {}, not running", spec.id, StatusName(state.status)));
    t.pid = state.pid;
    t.uid = spec.uid;
    t.gid = spec.gid;
    t.label = spec.label;
    t.workload_id = spec.id;
    t.job_id = spec.job_id;
    t.restart_count = spec.restart_count;
    for (const std::string& e : spec.env)
      if (e.rfind("CEDANA_CHECKPOINT_TCP=", 0) == 0) t.tcp = e.substr(e.find('=') + 1);
    t.workload = {{"argv", spec.argv},
                  {"cwd", spec.cwd},
                  {"stdout_path", spec.stdout_path},
                  {"stderr_path", spec.stderr_path},
                  {"stdout_ino", state.stdout_ino},
                  {"stderr_ino", state.stderr_ino}};
    if (!spec.mpi_scratch_dir.empty()) t.workload["mpi_scratch_dir"] = spec.mpi_scratch_dir;
    // bash reads its script as it runs (fd 255). A resubmitted job (new job id) has no file
    // at the old path, so the checkpoint keeps the script to put it back for the restore.
    // Read with the owner's identity, and only at slurmd's layout: the path came from a request.
    if (!spec.slurm_script.empty() && IsSlurmScriptPath(spec.slurm_script)) {
      auto script = ReadFileAs(spec.slurm_script, spec.uid, spec.gid, kMaxScriptBytes);
      struct stat st {};
      if (script.has_value() && ::stat(spec.slurm_script.c_str(), &st) == 0)
        t.workload["slurm_script"] = {
            {"path", spec.slurm_script}, {"mode", st.st_mode & 0777}, {"hex", HexEncode(*script)}};
    }
  } else {
    struct stat st {};
    if (o.pid <= 0 || ::stat(fmt::format("/proc/{}", o.pid).c_str(), &st) != 0)
      return NotFoundError(fmt::format("process {} does not exist", o.pid));
    CEDANA_RETURN_IF_ERROR(CheckOwner(caller, st.st_uid, fmt::format("process {}", o.pid)));
    t.pid = o.pid;
    t.uid = st.st_uid;
    t.gid = st.st_gid;
    t.label = fmt::format("pid-{}", o.pid);
    t.workload = {{"argv", nlohmann::json::array()}, {"stdout_ino", 0}, {"stderr_ino", 0}};
  }
  if (!o.label.empty()) t.label = o.label;
  CEDANA_RETURN_IF_ERROR(ValidateLabel(t.label));
  return t;
}

// A streaming dump's image files go to the streaming pack as CRIU writes them. All but the
// pages images are also written to the images dir: the credential check (D8) reads core-*.img
// there before the commit, and CRIU's small images help to debug a dump. pages-*.img hold the
// memory and are never written locally. Called from the image streamer's thread only.
class StreamedImages : public engine::ImageReceiver {
 public:
  StreamedImages(image::StreamingPack* pack, std::string dir) : pack_(pack), dir_(std::move(dir)) {}

  Result<int> Open(const std::string& name) override {
    CEDANA_ASSIGN_OR_RETURN(int id, pack_->OpenFile(name));  // refuses unsafe names
    UniqueFd fd;
    if (!image::IsPagesImage(name)) {
      std::string path = dir_ + "/" + name;
      fd.Reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!fd.valid()) return ErrnoStatus(errno, "creating " + path);
    }
    if (local_.size() <= static_cast<size_t>(id)) local_.resize(id + 1);
    local_[id] = std::move(fd);
    return id;
  }
  Status Write(int file, const void* data, size_t size) override {
    if (file >= 0 && static_cast<size_t>(file) < local_.size() && local_[file].valid()) {
      const char* p = static_cast<const char*>(data);
      for (size_t left = size; left > 0;) {
        ssize_t n = ::write(local_[file].get(), p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return ErrnoStatus(errno, "writing to " + dir_);
        p += n;
        left -= static_cast<size_t>(n);
      }
    }
    return pack_->Append(file, data, size);
  }
  Status Close(int file) override {
    if (file >= 0 && static_cast<size_t>(file) < local_.size()) local_[file].Reset();
    return pack_->CloseFile(file);
  }

 private:
  image::StreamingPack* pack_;
  std::string dir_;
  std::vector<UniqueFd> local_;
};

std::string NewCheckpointId() {
  return NewId(storage::CheckpointIdStamp(std::chrono::system_clock::now()));
}

// The memory of a tree (VmRSS of each process): about what CRIU writes for it.
uint64_t TreeMemoryBytes(pid_t root) {
  uint64_t total = 0;
  Result<std::vector<pid_t>> tree = engine::ProcessTreeOf(root);
  if (!tree.has_value()) return 0;
  for (pid_t pid : *tree) total += engine::StatusNumber(pid, "VmRSS").value_or(0) << 10;
  return total;
}

// A full filesystem: says which dir it was, what is free there and about what was needed.
Status ExplainNoSpace(Status s, const std::string& what, const std::string& dir, uint64_t needed) {
  if (s.ok() || (s.message().find("No space left on device") == std::string::npos &&
                 s.message().find("Disk quota exceeded") == std::string::npos))
    return s;
  struct statvfs fs_stat {};
  std::string free_note;
  if (::statvfs(dir.c_str(), &fs_stat) == 0)
    free_note = fmt::format(", {} MiB free",
                            (static_cast<uint64_t>(fs_stat.f_bavail) * fs_stat.f_frsize) >> 20);
  return Status(s.code(), fmt::format("{} {} is full (about {} MiB needed{}; free space there, or "
                                      "point {} elsewhere): {}",
                                      what, dir, (needed + (1 << 20) - 1) >> 20, free_note,
                                      what == "work dir" ? "checkpoint.work_dir" : "checkpoint.dir",
                                      s.message()));
}

// Undoes the network lock CRIU left on a tree it left stopped, if any (engine/network_lock.h).
void UnlockConnections(const std::string& images_dir, const std::string& checkpoint_id,
                       pid_t continued) {
  if (Status s = engine::UndoLeftLock(images_dir + "/dump.log", continued); !s.ok())
    log::Warn("dump: checkpoint {}: undoing CRIU's network lock: {}", checkpoint_id, s.ToString());
}

std::string KernelRelease() {
  utsname u{};
  return ::uname(&u) == 0 ? u.release : "";
}

// The dump of a resolved target (its owner checked): everything after ResolveTarget.
Result<DumpOutcome> DumpTarget(Node& node, const Target& target, const DumpOptions& options,
                               const DumpProgress& progress) {
  auto started = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock;
  if (!target.workload_id.empty()) lock = node.LockWorkload(target.workload_id);

  // Validate everything before touching the workload: bad input must not freeze it.
  const Config& cfg = node.config();
  CEDANA_ASSIGN_OR_RETURN(image::Codec codec,
                          image::ParseCodec(options.compression.empty() ? cfg.checkpoint_compression
                                                                        : options.compression));
  int streams = options.streams == 0 ? cfg.checkpoint_streams : options.streams;
  if (streams < 1 || streams > kMaxCheckpointStreams)
    return InvalidArgumentError(
        fmt::format("streams must be between 1 and {}, got {}", kMaxCheckpointStreams, streams));
  const std::string& tcp_setting = !options.tcp.empty()  ? options.tcp
                                   : !target.tcp.empty() ? target.tcp
                                                         : cfg.checkpoint_tcp;
  CEDANA_ASSIGN_OR_RETURN(OutsideTcp outside_tcp, ParseOutsideTcp(tcp_setting));
  CEDANA_ASSIGN_OR_RETURN(auto store, node.OpenStore(options.dir));
  // Checkpoint files are written as the owner in unprivileged mode (root_squash NFS).
  const auto [store_uid, store_gid] = node.StoreIdentityFor(target.uid, target.gid);
  {
    AsFileUser as_owner(store_uid, store_gid);
    CEDANA_RETURN_IF_ERROR(
        store->CheckWritable(UserName(target.uid)));  // its message names the checkpoint dir
  }

  image::Manifest m;
  m.id = NewCheckpointId();
  m.label = target.label;
  m.owner = UserName(target.uid);
  m.owner_uid = target.uid;
  m.owner_gid = target.gid;
  m.workload_id = target.workload_id;
  m.job_id = target.job_id;
  m.node = node.hostname();
  m.criu_version = node.criu_version();
  m.kernel = KernelRelease();
  m.codec = codec;
  m.workload = target.workload;
  m.reason = options.reason;
  m.restart_count = target.restart_count;
  storage::CheckpointRef ref{m.owner, m.label, m.id};

  const std::string images_name = DumpImagesName(m.id);
  const std::string images_dir = cfg.work_dir + "/" + images_name;
  node.ClaimWorkDir(images_name);
  ScopeExit remove_images([&] {
    (void)fs::RemoveTree(images_dir);
    node.ReleaseWorkDir(images_name);
  });
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(images_dir, 0700));
  const std::optional<engine::RunAs> criu_identity = node.CriuIdentityFor(target.uid, target.gid);
  if (criu_identity && ::chown(images_dir.c_str(), target.uid, target.gid) != 0)
    return ErrnoStatus(errno, "giving the images dir " + images_dir + " to " + m.owner);
  CEDANA_ASSIGN_OR_RETURN(const TcpDecision tcp,
                          DecideTcpForTree(target.pid, outside_tcp, criu_identity.has_value()));
  if (tcp.mode != TcpMode::kNone) m.workload["tcp"] = TcpModeName(tcp.mode);
  // The ports a restore binds again, and first clears of TIME_WAIT sockets (engine/time_wait.h).
  if (!tcp.ports.empty()) m.workload["tcp_ports"] = tcp.ports;

  // Without leave-running the tree is left *stopped* rather than killed: if packing or the
  // upload fails we can still continue it; it is killed only once the checkpoint is committed.
  // While the marker exists the supervisor lets the workload live even if its job proxy died:
  // a dump that is under way may still commit.
  std::string marker =
      target.workload_id.empty() ? "" : node.records().DumpingMarker(target.workload_id);
  if (!marker.empty()) (void)fs::WriteFileAtomic(marker, m.id, 0644);
  ScopeExit remove_marker([&] {
    if (!marker.empty()) ::unlink(marker.c_str());
  });
  // A daemon killed from here on leaves the tree stopped and the checkpoint half-written: the
  // journal lets the next one put both right (daemon/recovery.h). Ended last, after a rollback.
  const DumpJournal journal(cfg.state_dir);
  CEDANA_RETURN_IF_ERROR(journal.Begin(DumpIntent{m.id, m.owner, m.label, target.workload_id,
                                                  target.pid, engine::ProcessStartTime(target.pid),
                                                  target.uid, target.gid, options.leave_running}))
      << "recording the dump in " << cfg.state_dir;
  ScopeExit end_journal([&] { journal.End(m.id); });
  if (progress) progress("dumping", 0, 0);
  engine::DumpRequest req;
  req.pid = target.pid;
  req.images_dir = images_dir;
  req.leave_running = options.leave_running;
  req.leave_stopped = !options.leave_running;
  req.shell_job = target.workload_id.empty();
  req.tcp_established = tcp.mode == TcpMode::kEstablished;
  req.tcp_close = tcp.mode == TcpMode::kClose;
  req.run_as = criu_identity;
  if (criu_identity) log::Info("dump: criu runs as {} (unprivileged mode)", m.owner);

  // From here on a failure deletes what was stored and continues the tree (a streaming dump
  // stores while CRIU dumps, so its rollback starts before CRIU does).
  bool committed = false;
  bool rollback_armed = false;
  std::unique_ptr<image::StreamingPack> pack;
  ScopeExit thaw([&] {
    if (committed || !rollback_armed) return;
    if (pack) (void)pack->Abort();  // its threads write into what is deleted next
    {
      AsFileUser as_owner(store_uid, store_gid);
      (void)store->Delete(ref);
    }
    if (!options.leave_running) {
      // CRIU left the stopped tree's connections locked: the continued tree needs them.
      if (tcp.mode == TcpMode::kEstablished) UnlockConnections(images_dir, m.id, target.pid);
      int n = engine::SignalTree(target.pid, SIGCONT);
      log::Warn("dump: checkpoint {} failed; continued {} processes of pid {}", m.id, n,
                target.pid);
    }
  });
  // The workload is frozen only while CRIU runs: "dump N ms" in the log is CRIU's time.
  auto criu_started = std::chrono::steady_clock::now();
  if (cfg.checkpoint_streaming) {
    image::StreamingPackOptions stream;
    stream.streams = streams;
    stream.codec = codec;
    stream.memory_limit = static_cast<uint64_t>(cfg.checkpoint_memory_limit_mib) << 20;
    if (progress) stream.progress = [&](uint64_t done, uint64_t) { progress("dumping", done, 0); };
    {
      // The pack's threads are created here and inherit this file-system identity; CRIU and
      // the image streamer's thread (the local images dir) do not.
      AsFileUser as_owner(store_uid, store_gid);
      CEDANA_ASSIGN_OR_RETURN(pack, image::StreamingPack::Start(*store, ref, std::move(stream)));
    }
    rollback_armed = true;
    StreamedImages images(pack.get(), images_dir);
    if (Status s = node.criu().DumpStreaming(req, &images); !s.ok()) {
      // A store failure is the cause; CRIU's failure is then only its consequence.
      Status cause = pack->Abort();
      if (!cause.ok())
        return ExplainNoSpace(cause, "checkpoint dir", store->Describe(),
                              TreeMemoryBytes(target.pid))
            .WithContext("packing checkpoint " + m.id + " into " + store->Describe())
            .WithContext(fmt::format("dumping pid {}", target.pid));
      return s.WithContext(fmt::format("dumping pid {}", target.pid));
    }
  } else {
    if (Status s = node.criu().Dump(req); !s.ok())
      return ExplainNoSpace(s, "work dir", cfg.work_dir, TreeMemoryBytes(target.pid))
          .WithContext(fmt::format("dumping pid {}", target.pid));
    rollback_armed = true;
  }
  auto dumped = std::chrono::steady_clock::now();
  CEDANA_RETURN_IF_ERROR(FaultAt("dump:dumped"));

  // What CRIU recorded is what a restore recreates: a tree that held more than its owner's
  // identity (setuid, setgid, file capabilities) does not become the owner's checkpoint (D8).
  if (Status owned = image::CheckImagesOwnedBy(images_dir, target.uid, target.gid); !owned.ok())
    return Status(owned.code() == Code::kPermissionDenied ? Code::kUnsupported : owned.code(),
                  fmt::format("pid {}: {}", target.pid, owned.message()));

  // The pack's threads are created below and inherit this thread's file-system identity.
  std::optional<AsFileUser> as_owner(std::in_place, store_uid, store_gid);
  Result<std::vector<image::StreamInfo>> packed = std::vector<image::StreamInfo>{};
  std::string streamed_note;
  if (pack) {
    packed = pack->Finish();
    image::StreamingPackStats stats = pack->stats();
    m.images_bytes = stats.file_bytes;
    streamed_note = fmt::format(", streamed {} files, peak buffer {} MiB, criu waited {} ms",
                                stats.files, stats.peak_buffered >> 20, stats.waited.count());
  } else {
    CEDANA_ASSIGN_OR_RETURN(m.images_bytes, fs::TreeSize(images_dir));
    image::PackOptions pack_options;
    pack_options.streams = streams;
    pack_options.codec = codec;
    if (progress) {
      pack_options.progress = [&](uint64_t done, uint64_t total) {
        progress("packing", done, total);
      };
    }
    packed = image::PackImagesDir(images_dir, *store, ref, pack_options);
  }
  if (!packed.has_value())
    return ExplainNoSpace(packed.error(), "checkpoint dir", store->Describe(), m.images_bytes)
        .WithContext("packing checkpoint " + m.id + " into " + store->Describe());
  m.streams = std::move(packed).value();

  if (progress) progress("committing", 0, 0);
  m.created_at_ms = NowMs();
  const auto committing = std::chrono::steady_clock::now();
  m.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(committing - started).count();
  // Left running, the tree was stopped while CRIU ran; otherwise it stays stopped until the
  // commit below (then it is killed, or continued if the commit fails).
  m.frozen_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    (options.leave_running ? dumped : committing) - criu_started)
                    .count();
  image::SignManifest(&m, node.cluster_key());
  CEDANA_RETURN_IF_ERROR(FaultAt("dump:packed"));
  CEDANA_RETURN_IF_ERROR(store->Commit(ref, image::ManifestToJson(m)))
      << "committing checkpoint " << m.id;
  committed = true;
  (void)FaultAt("dump:committed");  // a pause only: past the commit nothing rolls back
  as_owner.reset();

  if (!options.leave_running) {
    // Committed: the workload may now end. Record why before killing, so that `ps` and the
    // supervisor's exit record say "checkpointed" rather than "killed".
    if (!target.workload_id.empty())
      (void)node.records().SaveEnd(target.workload_id, WorkloadEnd{m.id});
    // The whole tree: a --pid target is no namespace init whose death would take the rest.
    engine::SignalTree(target.pid, SIGKILL);
    // Return only once it is gone: callers (the SLURM proxy) end the job next.
    (void)engine::WaitUntilGone(target.pid, std::chrono::seconds(2));
    // Both ends of every connection are gone with the tree: no peer to keep the lock for. A
    // peer outside keeps it, so that its connection is not reset before the restore.
    if (tcp.mode == TcpMode::kEstablished && tcp.all_internal)
      UnlockConnections(images_dir, m.id, 0);
  }
  as_owner.emplace(store_uid, store_gid);
  if (Status s = image::ApplyRetention(*store, m.owner, m.label, cfg.checkpoint_keep); !s.ok())
    log::Warn("dump: retention for label {}: {}", m.label, s.ToString());

  // "dump": how long CRIU ran, i.e. the longest the tree was frozen (a streaming dump's CRIU
  // also waits for the store when the memory limit is reached).
  log::Info(
      "dump: checkpoint {} of pid {} (label {}, {} bytes stored, {}dump {} ms, total {} ms{})",
      m.id, target.pid, m.label, m.StoredBytes(),
      options.waited_ms > 0 ? fmt::format("waited {} ms for a slot, ", options.waited_ms) : "",
      std::chrono::duration_cast<std::chrono::milliseconds>(dumped - criu_started).count(),
      m.duration_ms, streamed_note);
  return DumpOutcome{m, store->Describe() + "/" + ref.Path()};
}

}  // namespace

std::string DumpImagesName(const std::string& checkpoint_id) { return "dump-" + checkpoint_id; }

Result<DumpOutcome> RunDump(Node& node, const Caller& caller, const DumpOptions& options,
                            const DumpProgress& progress) {
  // A workload that does not exist, is not the caller's or is not running: nothing to tell.
  CEDANA_ASSIGN_OR_RETURN(const Target target, ResolveTarget(node, caller, options));
  Result<DumpOutcome> out = DumpTarget(node, target, options, progress);
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

// What a dump of `o` asks of the node (daemon/dump_queue.h): its tree's resident memory is
// about what CRIU writes; the dump itself holds its streaming buffer, and the images too when
// the work dir is in memory.
DumpDemand DemandOf(Node& node, const DumpOptions& o, int64_t deadline_ms) {
  constexpr uint64_t kDumpBaseBytes = 64ull << 20;  // CRIU, the packer's buffers
  pid_t root = o.pid;
  if (!o.workload_id.empty())
    if (auto state = node.records().LoadState(o.workload_id); state.has_value()) root = state->pid;
  DumpDemand d;
  d.key = o.workload_id.empty() ? fmt::format("pid {}", root) : o.workload_id;
  d.bytes = engine::TreeResidentBytes(root);
  d.memory_bytes = kDumpBaseBytes;
  if (node.config().checkpoint_streaming)
    d.memory_bytes += static_cast<uint64_t>(node.config().checkpoint_memory_limit_mib) << 20;
  else if (fs::IsInMemoryFileSystem(node.config().work_dir)) d.memory_bytes += d.bytes;
  // A deadline already past goes first, no earlier than "now" (the claim is the caller's own).
  d.deadline_ms = deadline_ms > 0 ? std::max(deadline_ms, UnixMillis()) : 0;
  return d;
}

}  // namespace cedana::daemon
