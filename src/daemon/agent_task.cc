#include "daemon/agent_task.h"

#include "protocol/field_reader.h"

namespace cedana::daemon {
namespace {

Status ReadOptionalString(const protocol::FieldReader& f, const nlohmann::json& op, const char* key,
                          std::string* out) {
  if (op.contains(key) && op[key].is_null()) return OkStatus();
  return f.String(key, out);
}

}  // namespace

Result<AgentTask> ReadAgentTask(const nlohmann::json& op) {
  if (!op.is_object()) return InvalidArgumentError("operation: not a JSON object");
  protocol::FieldReader f(op, "operation");
  AgentTask t;
  CEDANA_RETURN_IF_ERROR(f.Int("id", 1, INT64_MAX, &t.id));
  if (t.id == 0) return InvalidArgumentError("operation: \"id\" is missing");
  CEDANA_RETURN_IF_ERROR(f.String("kind", &t.kind));
  if (op.contains("job_id") && !op["job_id"].is_null()) {
    int64_t job = 0;
    CEDANA_RETURN_IF_ERROR(f.Int("job_id", 1, INT64_MAX, &job));
    t.job = std::to_string(job);
  }
  CEDANA_RETURN_IF_ERROR(f.String("owner", &t.owner));
  CEDANA_RETURN_IF_ERROR(ReadOptionalString(f, op, "checkpoint_id", &t.checkpoint_id));
  CEDANA_RETURN_IF_ERROR(ReadOptionalString(f, op, "reason", &t.reason));
  return t;
}

}  // namespace cedana::daemon
