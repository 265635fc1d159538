#include "protocol/daemon_request.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "common/checkpoint_reason.h"
#include "common/checkpoint_streams.h"
#include "common/job_id.h"
#include "common/label.h"
#include "protocol/field_reader.h"

namespace cedana::protocol {
namespace {

constexpr std::array<std::pair<DaemonOp, std::string_view>, 12> kOpNames = {{
    {DaemonOp::kPing, "ping"},
    {DaemonOp::kRun, "run"},
    {DaemonOp::kPs, "ps"},
    {DaemonOp::kKill, "kill"},
    {DaemonOp::kInspect, "inspect"},
    {DaemonOp::kDump, "dump"},
    {DaemonOp::kRestore, "restore"},
    {DaemonOp::kCheckpoints, "checkpoints"},
    {DaemonOp::kCheckpointsDelete, "checkpoints_delete"},
    {DaemonOp::kSlurmJobStart, "slurm_job_start"},
    {DaemonOp::kSrun, "srun"},
    {DaemonOp::kStepTask, "step_task"},
}};

// Highest signal number Linux delivers (SIGRTMAX on x86-64 and arm64).
constexpr int kMaxSignal = 64;
// A descriptor number a caller may name (the default RLIMIT_NOFILE hard limit is far above
// what a relay or a task proxy ever opens).
constexpr int64_t kMaxCallerFd = 1 << 20;
// uid_t's all-ones value is (uid_t)-1, "no user" to chown and setresuid: never a real owner.
constexpr uint64_t kNoUid = std::numeric_limits<uid_t>::max();

Result<DaemonOp> ParseOp(const Message& message) {
  std::string op = RequestOpName(message);
  for (const auto& [value, name] : kOpNames)
    if (name == op) return value;
  std::string valid;
  for (const auto& entry : kOpNames)
    valid += fmt::format("{}{}", valid.empty() ? "" : ", ", entry.second);
  return InvalidArgumentError(fmt::format("unknown op \"{}\" (valid: {})", op, valid));
}

Status CheckVersion(const Message& message) {
  auto it = message.find("v");
  bool is_integer = it != message.end() && it->is_number_integer();
  if (is_integer && *it == kVersion) return OkStatus();
  // Never echo a non-integer "v": it may be megabytes of the caller's text.
  std::string given = it == message.end() ? "0" : is_integer ? it->dump() : "(not an integer)";
  return InvalidArgumentError(fmt::format(
      "protocol version {} is not supported by this daemon (it speaks {}); use a matching cedana",
      given, kVersion));
}

// Every field, whichever op: a field of the wrong type is refused even where this op ignores it.
Status ReadFields(const FieldReader& f, DaemonRequest* r) {
  CEDANA_RETURN_IF_ERROR(f.String("id", &r->id));
  CEDANA_RETURN_IF_ERROR(f.String("label", &r->label));
  CEDANA_RETURN_IF_ERROR(f.String("job_id", &r->job_id));
  CEDANA_RETURN_IF_ERROR(f.String("dir", &r->dir));
  CEDANA_RETURN_IF_ERROR(f.String("checkpoint_id", &r->checkpoint_id));
  CEDANA_RETURN_IF_ERROR(f.StringList("argv", &r->argv));
  CEDANA_RETURN_IF_ERROR(f.StringList("env", &r->env));
  CEDANA_RETURN_IF_ERROR(f.String("cwd", &r->cwd));
  CEDANA_RETURN_IF_ERROR(f.String("stdout_path", &r->stdout_path));
  CEDANA_RETURN_IF_ERROR(f.String("stderr_path", &r->stderr_path));
  CEDANA_RETURN_IF_ERROR(f.Bool("restore_label", &r->restore_label));
  CEDANA_RETURN_IF_ERROR(f.String("slurm_script", &r->slurm_script));
  CEDANA_RETURN_IF_ERROR(f.Bool("leave_running", &r->leave_running));
  CEDANA_RETURN_IF_ERROR(f.String("compression", &r->compression));
  CEDANA_RETURN_IF_ERROR(f.String("tcp", &r->tcp));
  CEDANA_RETURN_IF_ERROR(f.String("reason", &r->reason));
  int64_t n = r->owner_pid;
  CEDANA_RETURN_IF_ERROR(f.Int("owner_pid", 0, std::numeric_limits<pid_t>::max(), &n));
  r->owner_pid = static_cast<pid_t>(n);
  n = r->pid;
  CEDANA_RETURN_IF_ERROR(f.Int("pid", 0, std::numeric_limits<pid_t>::max(), &n));
  r->pid = static_cast<pid_t>(n);
  n = r->streams;
  CEDANA_RETURN_IF_ERROR(
      f.Int("streams", std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), &n));
  // 0 means "the configured number" only when the field is absent: an explicit 0 is a mistake.
  // The message is the one the dump gives for a configured number out of range.
  if (f.Has("streams") && (n < 1 || n > kMaxCheckpointStreams))
    return InvalidArgumentError(
        fmt::format("streams must be between 1 and {}, got {}", kMaxCheckpointStreams, n));
  r->streams = static_cast<int>(n);
  CEDANA_RETURN_IF_ERROR(
      f.Int("deadline_ms", 0, std::numeric_limits<int64_t>::max(), &r->deadline_ms));
  n = r->signal_number;
  CEDANA_RETURN_IF_ERROR(f.Int("signal", 1, kMaxSignal, &n));
  r->signal_number = static_cast<int>(n);
  n = r->uid;
  CEDANA_RETURN_IF_ERROR(f.Int("uid", 0, kNoUid - 1, &n));
  r->uid = static_cast<uid_t>(n);
  CEDANA_RETURN_IF_ERROR(f.IntList("caller_fds", -1, kMaxCallerFd, &r->caller_fds));
  CEDANA_RETURN_IF_ERROR(f.String("step", &r->step));
  n = r->task;
  CEDANA_RETURN_IF_ERROR(f.Int("task", 0, std::numeric_limits<int>::max(), &n));
  r->task = static_cast<int>(n);
  return OkStatus();
}

// What the values mean, once their types are right.
Status CheckValues(const FieldReader& f, const DaemonRequest& r) {
  // run names the workload after its id when no label is given; an explicit "" is a mistake.
  // The other ops read "" as "no label".
  if (!r.label.empty() || (r.op == DaemonOp::kRun && f.Has("label"))) {
    CEDANA_RETURN_IF_ERROR(ValidateLabel(r.label));
  }
  if (!r.job_id.empty()) {
    CEDANA_RETURN_IF_ERROR(ValidateJobId(r.job_id));
  }
  if (f.Has("reason")) CEDANA_RETURN_IF_ERROR(ValidateCheckpointReason(r.reason));
  if (r.op == DaemonOp::kSlurmJobStart) {
    if (!f.Has("uid")) return f.Bad("uid", "a user id");
    if (r.job_id.empty()) return f.Bad("job_id", "a SLURM job number");
  }
  if (r.op == DaemonOp::kSrun && (r.caller_fds.size() != 1 || r.caller_fds[0] < 0))
    return f.Bad("caller_fds", "the status pipe's write end, one descriptor");
  if (r.op == DaemonOp::kStepTask) {
    if (r.step.empty()) return f.Bad("step", "the step's name from CEDANA_STEP");
    if (r.caller_fds.size() != 4 ||
        std::any_of(r.caller_fds.begin() + 1, r.caller_fds.end(), [](int fd) { return fd < 0; }))
      return f.Bad("caller_fds", "four descriptors: stdin (-1: none), stdout, stderr, status");
  }
  return OkStatus();
}

}  // namespace

std::string_view DaemonOpName(DaemonOp op) {
  for (const auto& [value, name] : kOpNames)
    if (value == op) return name;
  return "unknown";
}

std::string RequestOpName(const Message& message) {
  if (!message.is_object()) return "";
  auto it = message.find("op");
  return it != message.end() && it->is_string() ? it->get<std::string>() : "";
}

Message EncodeDaemonRequest(const DaemonRequest& r) {
  const DaemonRequest d;
  Message m = {{"op", std::string(DaemonOpName(r.op))}};
  auto put = [&](const char* key, const auto& value, const auto& default_value) {
    if (value != default_value) m[key] = value;
  };
  put("id", r.id, d.id);
  put("label", r.label, d.label);
  put("job_id", r.job_id, d.job_id);
  put("dir", r.dir, d.dir);
  put("checkpoint_id", r.checkpoint_id, d.checkpoint_id);
  put("argv", r.argv, d.argv);
  put("env", r.env, d.env);
  put("cwd", r.cwd, d.cwd);
  put("stdout_path", r.stdout_path, d.stdout_path);
  put("stderr_path", r.stderr_path, d.stderr_path);
  put("restore_label", r.restore_label, d.restore_label);
  put("owner_pid", r.owner_pid, d.owner_pid);
  put("slurm_script", r.slurm_script, d.slurm_script);
  put("pid", r.pid, d.pid);
  put("leave_running", r.leave_running, d.leave_running);
  put("compression", r.compression, d.compression);
  put("streams", r.streams, d.streams);
  put("tcp", r.tcp, d.tcp);
  put("reason", r.reason, d.reason);
  put("deadline_ms", r.deadline_ms, d.deadline_ms);
  put("signal", r.signal_number, d.signal_number);
  // slurm_job_start requires it, root's 0 included.
  if (r.op == DaemonOp::kSlurmJobStart || r.uid != d.uid) m["uid"] = r.uid;
  put("caller_fds", r.caller_fds, d.caller_fds);
  put("step", r.step, d.step);
  put("task", r.task, d.task);
  return m;
}

Result<DaemonRequest> ParseDaemonRequest(const Message& message) {
  if (!message.is_object()) return InvalidArgumentError("malformed request (not a JSON object)");
  CEDANA_RETURN_IF_ERROR(CheckVersion(message));
  DaemonRequest request;
  CEDANA_ASSIGN_OR_RETURN(request.op, ParseOp(message));
  FieldReader fields(message, "request");
  CEDANA_RETURN_IF_ERROR(ReadFields(fields, &request));
  CEDANA_RETURN_IF_ERROR(CheckValues(fields, request));
  return request;
}

}  // namespace cedana::protocol
