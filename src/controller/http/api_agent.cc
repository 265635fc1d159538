// /v1/agent/*: what node daemons call (with the admin token): registration and heartbeat, the
// SLURM jobs they manage, claiming queued operations and reporting their progress.
#include <httplib.h>

#include <limits>
#include <optional>
#include <utility>

#include "common/log.h"
#include "controller/http/api_json.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"
#include "controller/timeline/job_events.h"
#include "protocol/field_reader.h"

namespace cedana::controller {
namespace {

using protocol::FieldReader;

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

Result<std::string> NodeOf(const FieldReader& body) {
  std::string node;
  CEDANA_RETURN_IF_ERROR(body.String("node", &node));
  if (node.empty()) return InvalidArgumentError("\"node\" is missing");
  return node;
}

// One entry of a node's workload report; `run_start` is set when the node says when the job's
// current run began.
Status ReadManagedJob(const nlohmann::json& w, ManagedJob* m, std::optional<JobEvent>* run_start) {
  if (!w.is_object()) return InvalidArgumentError("body field \"workloads\" must hold objects");
  FieldReader f(w, "workload");
  CEDANA_RETURN_IF_ERROR(f.Int("job_id", 0, kMaxInt, &m->job_id));
  CEDANA_RETURN_IF_ERROR(f.String("label", &m->label));
  CEDANA_RETURN_IF_ERROR(f.String("user", &m->user));
  CEDANA_RETURN_IF_ERROR(f.String("status", &m->status));
  // What the node says went wrong, bounded: it is shown to the job's owner as it is.
  CEDANA_RETURN_IF_ERROR(f.String("notice", &m->notice));
  m->notice = m->notice.substr(0, 2000);
  CEDANA_RETURN_IF_ERROR(f.Int("notice_at_ms", 0, kMaxInt, &m->notice_at_ms));
  int64_t started = 0, restarts = 0;
  std::string restored_from;
  CEDANA_RETURN_IF_ERROR(f.Int("started_at_ms", 0, kMaxInt, &started));
  CEDANA_RETURN_IF_ERROR(f.Int("restart_count", 0, kMaxInt, &restarts));
  CEDANA_RETURN_IF_ERROR(f.String("restored_from", &restored_from));
  if (started > 0) *run_start = StartOfRun(m->job_id, restarts, started, restored_from);
  return OkStatus();
}

}  // namespace

void ApiServer::RegisterAgentRoutes() {
  Route(Method::kPost, "/v1/agent/register", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          FieldReader fields(body, "body");
          CEDANA_ASSIGN_OR_RETURN(std::string node, NodeOf(fields));
          std::string version;
          CEDANA_RETURN_IF_ERROR(fields.String("version", &version));
          CEDANA_RETURN_IF_ERROR(catalog_.nodes().Touch(node, version));
          return Reply{200, {{"node", node}, {"registered", true}}};
        });

  Route(Method::kPost, "/v1/agent/workloads", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          FieldReader fields(body, "body");
          CEDANA_ASSIGN_OR_RETURN(std::string node, NodeOf(fields));
          std::string version;
          CEDANA_RETURN_IF_ERROR(fields.String("version", &version));
          const nlohmann::json none = nlohmann::json::array();
          const nlohmann::json& workloads = fields.Has("workloads") ? body["workloads"] : none;
          if (!workloads.is_array())
            return InvalidArgumentError("body field \"workloads\" must be an array");
          std::vector<ManagedJob> jobs;
          std::vector<JobEvent> starts;
          for (const auto& w : workloads) {
            ManagedJob m;
            std::optional<JobEvent> run_start;
            CEDANA_RETURN_IF_ERROR(ReadManagedJob(w, &m, &run_start));
            if (m.job_id <= 0) continue;
            if (run_start) starts.push_back(*run_start);
            jobs.push_back(std::move(m));
          }
          CEDANA_RETURN_IF_ERROR(catalog_.nodes().Touch(node, version));
          CEDANA_RETURN_IF_ERROR(catalog_.jobs().SyncManaged(node, jobs));
          CEDANA_RETURN_IF_ERROR(catalog_.job_events().RecordRunStarts(starts));
          return Reply{200, {{"jobs", jobs.size()}}};
        });

  Route(Method::kGet, "/v1/agent/tasks", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          auto node = Query(req, "node");
          if (!node) return InvalidArgumentError("?node= is missing");
          CEDANA_ASSIGN_OR_RETURN(auto ops, catalog_.operations().Claim(*node));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& o : ops) out.push_back(ToJson(o));
          return Reply{200, out};
        });

  Route(
      Method::kPost, R"(/v1/agent/operations/(\d+))", Access::kAdmin,
      [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
        CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "operation id"));
        CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
        CEDANA_ASSIGN_OR_RETURN(OperationRecord op, catalog_.operations().Get(id));
        FieldReader fields(body, "body");
        bool reports_end = false;  // the report says it ended (a progress report does not)
        if (fields.Has("state")) {
          // A node reports progress or the end; only the controller queues.
          const nlohmann::json& word = body["state"];
          std::optional<OperationState> state =
              word.is_string() ? ValueNamed(kOperationStateNames, word.get<std::string>())
                               : std::nullopt;
          if (!state || *state == OperationState::kQueued)
            return InvalidArgumentError("state " + word.dump() + " (valid: running, done, failed)");
          op.state = *state;
          reports_end = IsFinal(op.state);
        }
        CEDANA_RETURN_IF_ERROR(fields.String("phase", &op.phase));
        CEDANA_RETURN_IF_ERROR(fields.Int("done_bytes", 0, kMaxInt, &op.done_bytes));
        CEDANA_RETURN_IF_ERROR(fields.Int("total_bytes", 0, kMaxInt, &op.total_bytes));
        // Absent or null: unchanged.
        for (auto [key, slot] :
             {std::pair{"checkpoint_id", &op.checkpoint_id}, std::pair{"error", &op.error}}) {
          if (!fields.Has(key) || body[key].is_null()) continue;
          std::string text;
          CEDANA_RETURN_IF_ERROR(fields.String(key, &text));
          *slot = text;
        }
        if (body.contains("phases")) {
          CEDANA_ASSIGN_OR_RETURN(op.phases_ms, PhasesIn(body["phases"]));
        }
        CEDANA_RETURN_IF_ERROR(catalog_.operations().Update(op));
        if (reports_end) {
          log::Info("api: operation {} ({} of job {}) on {}: {}{}", op.id,
                    NameOf(kOperationKindNames, op.kind), op.job_id.value_or(0), op.node,
                    NameOf(kOperationStateNames, op.state), op.error ? ": " + *op.error : "");
          if (services_.operation_finished) services_.operation_finished(op);
        }
        return Reply{200, ToJson(op)};
      });
}

}  // namespace cedana::controller
