#include "protocol/daemon_reply.h"

#include <limits>

#include "protocol/field_reader.h"

namespace cedana::protocol {
namespace {

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxUint32 = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// Reads `key` as an integer of T's type within [0, max].
template <typename T>
Status ReadCount(const FieldReader& f, const char* key, int64_t max, T* out) {
  int64_t v = static_cast<int64_t>(*out);
  CEDANA_RETURN_IF_ERROR(f.Int(key, 0, max, &v));
  *out = static_cast<T>(v);
  return OkStatus();
}

// A nested object, read with its own reader; absent leaves *out unchanged.
template <typename T, typename Read>
Status ReadObject(const Message& m, const char* key, Read read, T* out) {
  auto it = m.find(key);
  if (it == m.end()) return OkStatus();
  if (!it->is_object())
    return InvalidArgumentError(fmt::format("reply field \"{}\" must be an object", key));
  return read(*it, out);
}

// "phases": [{"phase": "freeze", "ms": 120}, ...], in the order the steps ran.
Status ReadPhases(const Message& m, PhaseDurations* out) {
  auto it = m.find("phases");
  if (it == m.end()) return OkStatus();
  if (!it->is_array()) return InvalidArgumentError("reply field \"phases\" must be an array");
  for (const Message& entry : *it) {
    if (!entry.is_object()) return InvalidArgumentError("reply field \"phases\" must hold objects");
    const FieldReader f(entry, "phase");
    std::pair<std::string, int64_t> phase;
    CEDANA_RETURN_IF_ERROR(f.String("phase", &phase.first));
    CEDANA_RETURN_IF_ERROR(ReadCount(f, "ms", kMaxInt64, &phase.second));
    out->push_back(std::move(phase));
  }
  return OkStatus();
}

Message SummaryJson(const CheckpointSummary& c) {
  Message j = {{"id", c.id},
               {"label", c.label},
               {"owner", c.owner},
               {"owner_uid", c.owner_uid},
               {"created_at_ms", c.created_at_ms},
               {"duration_ms", c.duration_ms},
               {"reason", c.reason},
               {"restart_count", c.restart_count},
               {"frozen_ms", c.frozen_ms},
               {"stored_bytes", c.stored_bytes},
               {"images_bytes", c.images_bytes},
               {"codec", c.codec},
               {"streams", c.streams},
               {"raw_streams", c.raw_streams},
               {"node", c.node},
               {"job_id", c.job_id},
               {"workload_id", c.workload_id}};
  if (!c.location.empty()) j["location"] = c.location;
  if (!c.state.empty()) j["state"] = c.state;
  if (!c.run.empty()) j["run"] = c.run;
  if (!c.phases_ms.empty()) j["phases"] = PhaseDurationsJson(c.phases_ms);
  return j;
}

Status ReadSummary(const Message& m, CheckpointSummary* c) {
  const FieldReader f(m, "reply");
  CEDANA_RETURN_IF_ERROR(f.String("id", &c->id));
  CEDANA_RETURN_IF_ERROR(f.String("label", &c->label));
  CEDANA_RETURN_IF_ERROR(f.String("owner", &c->owner));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "owner_uid", kMaxUint32, &c->owner_uid));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "created_at_ms", kMaxInt64, &c->created_at_ms));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "duration_ms", kMaxInt64, &c->duration_ms));
  CEDANA_RETURN_IF_ERROR(f.String("reason", &c->reason));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "restart_count", kMaxUint32, &c->restart_count));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "frozen_ms", kMaxInt64, &c->frozen_ms));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "stored_bytes", kMaxInt64, &c->stored_bytes));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "images_bytes", kMaxInt64, &c->images_bytes));
  CEDANA_RETURN_IF_ERROR(f.String("codec", &c->codec));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "streams", kMaxInt, &c->streams));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "raw_streams", kMaxInt, &c->raw_streams));
  CEDANA_RETURN_IF_ERROR(f.String("node", &c->node));
  CEDANA_RETURN_IF_ERROR(f.String("job_id", &c->job_id));
  CEDANA_RETURN_IF_ERROR(f.String("workload_id", &c->workload_id));
  CEDANA_RETURN_IF_ERROR(f.String("location", &c->location));
  CEDANA_RETURN_IF_ERROR(f.String("state", &c->state));
  CEDANA_RETURN_IF_ERROR(f.String("run", &c->run));
  return ReadPhases(m, &c->phases_ms);
}

Status ReadTimeLimit(const Message& m, std::optional<TimeLimitGrant>* out) {
  const FieldReader f(m, "reply");
  TimeLimitGrant g;
  CEDANA_RETURN_IF_ERROR(f.Bool("requeue", &g.requeue));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "max_restarts", kMaxInt, &g.max_restarts));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "margin_seconds", kMaxInt, &g.margin_seconds));
  *out = g;
  return OkStatus();
}

Message WorkloadJson(const WorkloadInfo& w) {
  Message j = {{"id", w.id}};
  if (w.status.empty()) return j;
  j.update({{"label", w.label},
            {"status", w.status},
            {"pid", w.pid},
            {"uid", w.uid},
            {"user", w.user},
            {"argv", w.argv},
            {"exit_code", w.exit_code},
            {"error", w.error},
            {"started_at_ms", w.started_at_ms},
            {"stdout_path", w.stdout_path},
            {"restored_from", w.restored_from},
            {"job_id", w.job_id}});
  return j;
}

Status ReadWorkload(const Message& m, WorkloadInfo* w) {
  const FieldReader f(m, "reply");
  CEDANA_RETURN_IF_ERROR(f.String("id", &w->id));
  CEDANA_RETURN_IF_ERROR(f.String("label", &w->label));
  CEDANA_RETURN_IF_ERROR(f.String("status", &w->status));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "pid", std::numeric_limits<pid_t>::max(), &w->pid));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "uid", kMaxUint32, &w->uid));
  CEDANA_RETURN_IF_ERROR(f.String("user", &w->user));
  CEDANA_RETURN_IF_ERROR(f.StringList("argv", &w->argv));
  int64_t exit_code = w->exit_code;
  CEDANA_RETURN_IF_ERROR(f.Int("exit_code", -1, kMaxInt, &exit_code));
  w->exit_code = static_cast<int>(exit_code);
  CEDANA_RETURN_IF_ERROR(f.String("error", &w->error));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "started_at_ms", kMaxInt64, &w->started_at_ms));
  CEDANA_RETURN_IF_ERROR(f.String("stdout_path", &w->stdout_path));
  CEDANA_RETURN_IF_ERROR(f.String("restored_from", &w->restored_from));
  return f.String("job_id", &w->job_id);
}

// An array of objects under `key`, each read by `read`; absent leaves *out empty.
template <typename T, typename Read>
Status ReadArray(const Message& m, const char* key, Read read, std::vector<T>* out) {
  auto it = m.find(key);
  if (it == m.end()) return OkStatus();
  const std::string bad = fmt::format("reply field \"{}\" must be an array of objects", key);
  if (!it->is_array()) return InvalidArgumentError(bad);
  for (const Message& item : *it) {
    if (!item.is_object()) return InvalidArgumentError(bad);
    T value;
    CEDANA_RETURN_IF_ERROR(read(item, &value));
    out->push_back(std::move(value));
  }
  return OkStatus();
}

}  // namespace

Message EncodeReply(const CheckpointSummary& reply) { return {{"checkpoint", SummaryJson(reply)}}; }

Message EncodeReply(const StartedWorkload& r) {
  Message j = {{"id", r.id},
               {"pid", r.pid},
               {"label", r.label},
               {"stdout_path", r.stdout_path},
               {"checkpoint_id", r.checkpoint_id},
               {"checkpoint_created_at_ms", r.checkpoint_created_at_ms},
               {"checkpoint_duration_ms", r.checkpoint_duration_ms},
               {"checkpoint_reason", r.checkpoint_reason},
               {"skipped", r.skipped},
               {"fresh_reason", r.fresh_reason},
               {"restore_error", r.restore_error}};
  if (!r.phases_ms.empty()) j["phases"] = PhaseDurationsJson(r.phases_ms);
  if (r.time_limit)
    j["time_limit"] = {{"requeue", r.time_limit->requeue},
                       {"max_restarts", r.time_limit->max_restarts},
                       {"margin_seconds", r.time_limit->margin_seconds}};
  return j;
}

Message EncodeReply(const CheckpointList& reply) {
  Message list = Message::array();
  for (const CheckpointSummary& c : reply.checkpoints) list.push_back(SummaryJson(c));
  return {{"checkpoints", std::move(list)}, {"dir", reply.dir}};
}

Message EncodeReply(const SlurmJobRegistered& reply) {
  return {{"job_id", reply.job_id}, {"uid", reply.uid}};
}

Message EncodeReply(const WorkloadInfo& reply) { return {{"workload", WorkloadJson(reply)}}; }

Message EncodeReply(const WorkloadList& reply) {
  Message list = Message::array();
  for (const WorkloadInfo& w : reply.workloads) list.push_back(WorkloadJson(w));
  return {{"workloads", std::move(list)}};
}

Message EncodeReply(const DaemonInfo& reply) {
  return {{"version", reply.version},
          {"criu", reply.criu},
          {"criu_version", reply.criu_version},
          {"no_breakpoints", reply.no_breakpoints},
          {"checkpoint_dir", reply.checkpoint_dir}};
}

Message EncodeReply(const Signalled& reply) { return {{"id", reply.id}, {"signal", reply.signal}}; }

Message EncodeReply(const Deleted& reply) { return {{"deleted", reply.checkpoint_id}}; }

Result<CheckpointSummary> ParseDumpReply(const Message& reply) {
  CheckpointSummary c;
  CEDANA_RETURN_IF_ERROR(ReadObject(reply, "checkpoint", ReadSummary, &c));
  return c;
}

Result<StartedWorkload> ParseStartedWorkload(const Message& reply) {
  const FieldReader f(reply, "reply");
  StartedWorkload r;
  CEDANA_RETURN_IF_ERROR(f.String("id", &r.id));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "pid", std::numeric_limits<pid_t>::max(), &r.pid));
  CEDANA_RETURN_IF_ERROR(f.String("label", &r.label));
  CEDANA_RETURN_IF_ERROR(f.String("stdout_path", &r.stdout_path));
  CEDANA_RETURN_IF_ERROR(f.String("checkpoint_id", &r.checkpoint_id));
  CEDANA_RETURN_IF_ERROR(
      ReadCount(f, "checkpoint_created_at_ms", kMaxInt64, &r.checkpoint_created_at_ms));
  CEDANA_RETURN_IF_ERROR(
      ReadCount(f, "checkpoint_duration_ms", kMaxInt64, &r.checkpoint_duration_ms));
  CEDANA_RETURN_IF_ERROR(f.String("checkpoint_reason", &r.checkpoint_reason));
  CEDANA_RETURN_IF_ERROR(f.StringList("skipped", &r.skipped));
  CEDANA_RETURN_IF_ERROR(f.String("fresh_reason", &r.fresh_reason));
  CEDANA_RETURN_IF_ERROR(f.String("restore_error", &r.restore_error));
  CEDANA_RETURN_IF_ERROR(ReadObject(reply, "time_limit", ReadTimeLimit, &r.time_limit));
  CEDANA_RETURN_IF_ERROR(ReadPhases(reply, &r.phases_ms));
  return r;
}

Result<CheckpointList> ParseCheckpointList(const Message& reply) {
  const FieldReader f(reply, "reply");
  CheckpointList list;
  CEDANA_RETURN_IF_ERROR(f.String("dir", &list.dir));
  CEDANA_RETURN_IF_ERROR(ReadArray(reply, "checkpoints", ReadSummary, &list.checkpoints));
  return list;
}

Result<SlurmJobRegistered> ParseSlurmJobRegistered(const Message& reply) {
  const FieldReader f(reply, "reply");
  SlurmJobRegistered r;
  CEDANA_RETURN_IF_ERROR(f.String("job_id", &r.job_id));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "uid", kMaxUint32, &r.uid));
  return r;
}

Result<WorkloadInfo> ParseInspectReply(const Message& reply) {
  WorkloadInfo w;
  CEDANA_RETURN_IF_ERROR(ReadObject(reply, "workload", ReadWorkload, &w));
  return w;
}

Result<WorkloadList> ParseWorkloadList(const Message& reply) {
  WorkloadList list;
  CEDANA_RETURN_IF_ERROR(ReadArray(reply, "workloads", ReadWorkload, &list.workloads));
  return list;
}

Result<DaemonInfo> ParseDaemonInfo(const Message& reply) {
  const FieldReader f(reply, "reply");
  DaemonInfo d;
  CEDANA_RETURN_IF_ERROR(f.String("version", &d.version));
  CEDANA_RETURN_IF_ERROR(f.String("criu", &d.criu));
  CEDANA_RETURN_IF_ERROR(f.String("criu_version", &d.criu_version));
  CEDANA_RETURN_IF_ERROR(f.Bool("no_breakpoints", &d.no_breakpoints));
  CEDANA_RETURN_IF_ERROR(f.String("checkpoint_dir", &d.checkpoint_dir));
  return d;
}

Result<Signalled> ParseSignalled(const Message& reply) {
  const FieldReader f(reply, "reply");
  Signalled s;
  CEDANA_RETURN_IF_ERROR(f.String("id", &s.id));
  CEDANA_RETURN_IF_ERROR(ReadCount(f, "signal", kMaxInt, &s.signal));
  return s;
}

Result<Deleted> ParseDeleted(const Message& reply) {
  const FieldReader f(reply, "reply");
  Deleted d;
  CEDANA_RETURN_IF_ERROR(f.String("deleted", &d.checkpoint_id));
  return d;
}

}  // namespace cedana::protocol
