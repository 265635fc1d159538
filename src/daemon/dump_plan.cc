#include "daemon/dump_plan.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <chrono>

#include <fmt/format.h>

#include "common/checkpoint_reason.h"
#include "common/checkpoint_streams.h"
#include "common/hex.h"
#include "common/label.h"
#include "common/system_names.h"
#include "daemon/caller_files.h"
#include "storage/checkpoint_id.h"

namespace cedana::daemon {
namespace {

constexpr size_t kMaxScriptBytes = 4 << 20;

Result<DumpTarget> WorkloadTarget(const NodeContext& node, const Caller& caller,
                                  const std::string& id) {
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, node.records().LoadSpec(id));
  CEDANA_ASSIGN_OR_RETURN(WorkloadState state, node.records().LoadState(id));
  CEDANA_RETURN_IF_ERROR(CheckOwner(caller, spec.uid, "workload " + spec.id));
  if (state.status != WorkloadStatus::kRunning)
    return FailedPreconditionError(
        fmt::format("workload {} is {}, not running", spec.id, StatusName(state.status)));
  DumpTarget t;
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
  // bash reads its script as it runs (fd 255). A resubmitted job (new job id) has no file at
  // the old path, so the checkpoint keeps the script to put it back for the restore. Read with
  // the owner's identity, and only at slurmd's layout: the path came from a request.
  if (!spec.slurm_script.empty() && IsSlurmScriptPath(spec.slurm_script)) {
    auto script = ReadFileAs(spec.slurm_script, spec.uid, spec.gid, kMaxScriptBytes);
    struct stat st {};
    if (script.has_value() && ::stat(spec.slurm_script.c_str(), &st) == 0)
      t.workload["slurm_script"] = {
          {"path", spec.slurm_script}, {"mode", st.st_mode & 0777}, {"hex", HexEncode(*script)}};
  }
  return t;
}

Result<DumpTarget> ProcessTarget(const Caller& caller, pid_t pid) {
  struct stat st {};
  if (pid <= 0 || ::stat(fmt::format("/proc/{}", pid).c_str(), &st) != 0)
    return NotFoundError(fmt::format("process {} does not exist", pid));
  CEDANA_RETURN_IF_ERROR(CheckOwner(caller, st.st_uid, fmt::format("process {}", pid)));
  DumpTarget t;
  t.pid = pid;
  t.uid = st.st_uid;
  t.gid = st.st_gid;
  t.label = fmt::format("pid-{}", pid);
  t.workload = {{"argv", nlohmann::json::array()}, {"stdout_ino", 0}, {"stderr_ino", 0}};
  return t;
}

std::string KernelRelease() {
  utsname u{};
  return ::uname(&u) == 0 ? u.release : "";
}

}  // namespace

Result<DumpTarget> ResolveDumpTarget(const NodeContext& node, const Caller& caller,
                                     const DumpOptions& o) {
  CEDANA_ASSIGN_OR_RETURN(DumpTarget t, o.workload_id.empty()
                                            ? ProcessTarget(caller, o.pid)
                                            : WorkloadTarget(node, caller, o.workload_id));
  if (!o.label.empty()) t.label = o.label;
  CEDANA_RETURN_IF_ERROR(ValidateLabel(t.label));
  return t;
}

Result<DumpPlan> PlanDump(const NodeContext& node, const DumpTarget& target, const DumpOptions& o) {
  const Config& cfg = node.config();
  DumpPlan p;
  Codec codec = cfg.node.checkpoint_compression;
  if (!o.compression.empty()) {
    CEDANA_ASSIGN_OR_RETURN(codec, ParseCodec(o.compression));
  }
  p.streams = o.streams == 0 ? cfg.node.checkpoint_streams : o.streams;
  if (p.streams < 1 || p.streams > kMaxCheckpointStreams)
    return InvalidArgumentError(
        fmt::format("streams must be between 1 and {}, got {}", kMaxCheckpointStreams, p.streams));
  // The dump's own option, else the job's, else the node's.
  p.outside_tcp = cfg.node.checkpoint_tcp;
  if (const std::string& asked = !o.tcp.empty() ? o.tcp : target.tcp; !asked.empty()) {
    CEDANA_ASSIGN_OR_RETURN(p.outside_tcp, ParseOutsideTcp(asked));
  }
  CEDANA_RETURN_IF_ERROR(ValidateCheckpointReason(o.reason));
  p.direct = cfg.node.checkpoint_direct;
  p.dedup = cfg.node.checkpoint_dedup;
  p.criu_identity = node.CriuIdentityFor(target.uid, target.gid);
  p.store_identity = node.StoreIdentityFor(target.uid, target.gid);

  image::Manifest& m = p.manifest;
  m.id = NewId(storage::CheckpointIdStamp(std::chrono::system_clock::now()));
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
  m.reason = o.reason;
  m.restart_count = target.restart_count;
  p.ref = storage::CheckpointRef{m.owner, m.label, m.id};
  p.images_name = DumpImagesName(m.id);
  p.images_dir = cfg.node.work_dir + "/" + p.images_name;
  return p;
}

}  // namespace cedana::daemon
