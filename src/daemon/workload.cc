#include "daemon/workload.h"

#include <time.h>

#include <random>

#include <fmt/format.h>

#include "common/fs.h"

namespace cedana::daemon {

using nlohmann::json;

std::string StatusName(WorkloadStatus s) {
  switch (s) {
    case WorkloadStatus::kStarting: return "starting";
    case WorkloadStatus::kRunning: return "running";
    case WorkloadStatus::kExited: return "exited";
    case WorkloadStatus::kFailed: return "failed";
  }
  return "unknown";
}

namespace {

json StepPipesToJson(const std::vector<StepPipe>& pipes) {
  json a = json::array();
  for (const StepPipe& p : pipes) a.push_back({{"ino", p.ino}, {"tree_reads", p.tree_reads}});
  return a;
}

}  // namespace

json SpecToJson(const WorkloadSpec& s) {
  return {{"id", s.id},
          {"label", s.label},
          {"mode", NameOf(kWorkloadModeNames, s.mode)},
          {"argv", s.argv},
          {"env", s.env},
          {"cwd", s.cwd},
          {"uid", s.uid},
          {"gid", s.gid},
          {"groups", s.groups},
          {"stdout_path", s.stdout_path},
          {"stderr_path", s.stderr_path},
          {"job_id", s.job_id},
          {"created_at_ms", s.created_at_ms},
          {"owner_pid", s.owner_pid},
          {"slurm_script", s.slurm_script},
          {"mpi_scratch_dir", s.mpi_scratch_dir},
          {"restart_count", s.restart_count},
          {"images_dir", s.images_dir},
          {"restored_from", s.restored_from},
          {"dumped_stdout_ino", s.dumped_stdout_ino},
          {"dumped_stderr_ino", s.dumped_stderr_ino},
          {"restore_tcp", s.restore_tcp},
          {"criu_binary", s.criu_binary},
          {"criu_timeout_seconds", s.criu_timeout_seconds},
          {"criu_no_breakpoints", s.criu_no_breakpoints},
          {"unprivileged", s.unprivileged},
          {"direct_restore", s.direct_restore},
          {"step_pipes", StepPipesToJson(s.step_pipes)}};
}

Result<WorkloadSpec> SpecFromJson(const json& j) {
  WorkloadSpec s;
  try {
    s.id = j.at("id");
    s.label = j.value("label", "");
    const std::string mode = j.value("mode", "run");
    std::optional<WorkloadMode> named = ValueNamed(kWorkloadModeNames, mode);
    if (!named)
      return InvalidArgumentError(fmt::format("workload spec: mode \"{}\" is none of {}", mode,
                                              ValueNames(kWorkloadModeNames)));
    s.mode = *named;
    s.argv = j.value("argv", std::vector<std::string>{});
    s.env = j.value("env", std::vector<std::string>{});
    s.cwd = j.value("cwd", "/");
    s.uid = j.value("uid", 0u);
    s.gid = j.value("gid", 0u);
    s.groups = j.value("groups", std::vector<gid_t>{});
    s.stdout_path = j.value("stdout_path", "");
    s.stderr_path = j.value("stderr_path", "");
    s.job_id = j.value("job_id", "");
    s.restart_count = j.value("restart_count", 0u);
    s.created_at_ms = j.value("created_at_ms", int64_t{0});
    s.owner_pid = j.value("owner_pid", 0);
    s.slurm_script = j.value("slurm_script", "");
    s.mpi_scratch_dir = j.value("mpi_scratch_dir", "");
    s.images_dir = j.value("images_dir", "");
    s.restored_from = j.value("restored_from", "");
    s.dumped_stdout_ino = j.value("dumped_stdout_ino", uint64_t{0});
    s.dumped_stderr_ino = j.value("dumped_stderr_ino", uint64_t{0});
    s.restore_tcp = j.value("restore_tcp", "");
    s.criu_binary = j.value("criu_binary", "");
    s.criu_timeout_seconds = j.value("criu_timeout_seconds", 120);
    s.criu_no_breakpoints = j.value("criu_no_breakpoints", false);
    s.unprivileged = j.value("unprivileged", false);
    // "streamed_restore": the key's name in records written before the rename.
    s.direct_restore = j.value("direct_restore", j.value("streamed_restore", false));
    for (const json& p : j.value("step_pipes", json::array()))
      s.step_pipes.push_back({p.at("ino").get<uint64_t>(), p.at("tree_reads").get<bool>()});
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("workload spec: ") + e.what());
  }
  return s;
}

json StateToJson(const WorkloadState& s) {
  return {{"status", StatusName(s.status)},
          {"pid", s.pid},
          {"supervisor_pid", s.supervisor_pid},
          {"stdout_ino", s.stdout_ino},
          {"stderr_ino", s.stderr_ino},
          {"exit_code", s.exit_code},
          {"signal", s.signal},
          {"error", s.error},
          {"started_at_ms", s.started_at_ms},
          {"ended_at_ms", s.ended_at_ms},
          {"ended_by_itself", s.ended_by_itself}};
}

Result<WorkloadState> StateFromJson(const json& j) {
  WorkloadState s;
  std::string status = j.value("status", "starting");
  for (auto st : {WorkloadStatus::kStarting, WorkloadStatus::kRunning, WorkloadStatus::kExited,
                  WorkloadStatus::kFailed})
    if (StatusName(st) == status) s.status = st;
  s.pid = j.value("pid", 0);
  s.supervisor_pid = j.value("supervisor_pid", 0);
  s.stdout_ino = j.value("stdout_ino", uint64_t{0});
  s.stderr_ino = j.value("stderr_ino", uint64_t{0});
  s.exit_code = j.value("exit_code", -1);
  s.signal = j.value("signal", 0);
  s.error = j.value("error", "");
  s.started_at_ms = j.value("started_at_ms", int64_t{0});
  s.ended_at_ms = j.value("ended_at_ms", int64_t{0});
  s.ended_by_itself = j.value("ended_by_itself", false);
  return s;
}

WorkloadRecords::WorkloadRecords(std::string state_dir)
    : root_(std::move(state_dir) + "/workloads") {}

std::string WorkloadRecords::DirOf(const std::string& id) const { return root_ + "/" + id; }

namespace {
Result<json> ReadJson(const std::string& path) {
  CEDANA_ASSIGN_OR_RETURN(std::string text, fs::ReadFile(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidArgumentError(path + " is not valid JSON");
  return j;
}
}  // namespace

Status WorkloadRecords::Create(const WorkloadSpec& spec, fs::Durability durability) const {
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(DirOf(spec.id), 0711));
  return fs::WriteFileAtomic(DirOf(spec.id) + "/spec.json", SpecToJson(spec).dump(2), 0600,
                             durability);
}

Result<WorkloadSpec> WorkloadRecords::LoadSpec(const std::string& id) const {
  if (id.empty() || id.find('/') != std::string::npos || !fs::Exists(DirOf(id)))
    return NotFoundError("workload " + id + " not found (see `cedana ps`)");
  CEDANA_ASSIGN_OR_RETURN(json j, ReadJson(DirOf(id) + "/spec.json"));
  return SpecFromJson(j);
}

Result<WorkloadState> WorkloadRecords::LoadState(const std::string& id) const {
  auto j = ReadJson(DirOf(id) + "/state.json");
  if (!j.has_value()) return WorkloadState{};
  return StateFromJson(*j);
}

Status WorkloadRecords::SaveState(const std::string& id, const WorkloadState& state) const {
  return fs::WriteFileAtomic(DirOf(id) + "/state.json", StateToJson(state).dump(2), 0644);
}

std::optional<WorkloadEnd> WorkloadRecords::LoadEnd(const std::string& id) const {
  auto j = ReadJson(DirOf(id) + "/end.json");
  if (!j.has_value()) return std::nullopt;
  return WorkloadEnd{j->value("checkpoint_id", "")};
}

Status WorkloadRecords::SaveEnd(const std::string& id, const WorkloadEnd& end) const {
  return fs::WriteFileAtomic(DirOf(id) + "/end.json",
                             json{{"checkpoint_id", end.checkpoint_id}}.dump(), 0644);
}

std::optional<WorkloadNotice> WorkloadRecords::LoadNotice(const std::string& id) const {
  auto j = ReadJson(DirOf(id) + "/notice.json");
  if (!j.has_value() || !j->is_object() || !j->contains("text") || !j->at("text").is_string())
    return std::nullopt;
  const json& at = j->contains("at_ms") ? j->at("at_ms") : json();
  return WorkloadNotice{j->at("text").get<std::string>(),
                        at.is_number_integer() ? at.get<int64_t>() : 0};
}

Status WorkloadRecords::SaveNotice(const std::string& id, const WorkloadNotice& notice) const {
  return fs::WriteFileAtomic(DirOf(id) + "/notice.json",
                             json{{"text", notice.text}, {"at_ms", notice.at_ms}}.dump(), 0644);
}

Status WorkloadRecords::Remove(const std::string& id) const { return fs::RemoveTree(DirOf(id)); }

Result<std::vector<std::string>> WorkloadRecords::List() const {
  if (!fs::Exists(root_)) return std::vector<std::string>{};
  CEDANA_ASSIGN_OR_RETURN(auto names, fs::ListDir(root_));
  std::vector<std::pair<int64_t, std::string>> by_time;
  for (auto& n : names) {
    auto spec = ReadJson(DirOf(n) + "/spec.json");
    if (!spec.has_value()) continue;
    by_time.emplace_back(spec->value("created_at_ms", int64_t{0}), n);
  }
  std::sort(by_time.begin(), by_time.end());
  std::vector<std::string> ids;
  for (auto& [t, n] : by_time) ids.push_back(n);
  return ids;
}

Result<std::vector<WorkloadSpec>> WorkloadRecords::RunningOfJob(const std::string& job_id) const {
  CEDANA_ASSIGN_OR_RETURN(auto ids, List());
  std::vector<WorkloadSpec> out;
  for (const auto& id : ids) {
    auto spec = LoadSpec(id);
    auto state = LoadState(id);
    if (spec.has_value() && state.has_value() && spec->job_id == job_id &&
        state->status == WorkloadStatus::kRunning)
      out.push_back(std::move(spec).value());
  }
  return out;
}

std::string NewId(const std::string& prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:08x}", prefix, static_cast<uint32_t>(rng()));
}

int64_t NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace cedana::daemon
