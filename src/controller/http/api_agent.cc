// /v1/agent/*: what node daemons call (with the admin token): registration and heartbeat, the
// SLURM jobs they manage, claiming queued operations and reporting their progress.
#include <httplib.h>

#include "common/log.h"
#include "controller/http/api_json.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"
#include "controller/timeline/job_events.h"

namespace cedana::controller {
namespace {

Result<std::string> NodeOf(const nlohmann::json& body) {
  std::string node = body.value("node", "");
  if (node.empty()) return InvalidArgumentError("\"node\" is missing");
  return node;
}

}  // namespace

void ApiServer::RegisterAgentRoutes() {
  Route("POST", "/v1/agent/register", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          CEDANA_ASSIGN_OR_RETURN(std::string node, NodeOf(body));
          CEDANA_RETURN_IF_ERROR(catalog_.nodes().Touch(node, body.value("version", "")));
          return Reply{200, {{"node", node}, {"registered", true}}};
        });

  Route("POST", "/v1/agent/workloads", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          CEDANA_ASSIGN_OR_RETURN(std::string node, NodeOf(body));
          std::vector<ManagedJob> jobs;
          std::vector<JobEvent> starts;
          for (const auto& w : body.value("workloads", nlohmann::json::array())) {
            ManagedJob m;
            m.job_id = w.value("job_id", int64_t{0});
            m.label = w.value("label", "");
            m.user = w.value("user", "");
            m.status = w.value("status", "");
            // What the node says went wrong, bounded: it is shown to the job's owner as it is.
            if (w.contains("notice") && w["notice"].is_string())
              m.notice = w["notice"].get<std::string>().substr(0, 2000);
            if (w.contains("notice_at_ms") && w["notice_at_ms"].is_number_integer())
              m.notice_at_ms = w["notice_at_ms"].get<int64_t>();
            if (m.job_id <= 0) continue;
            int64_t started = w.value("started_at_ms", int64_t{0});
            if (started > 0)
              starts.push_back(StartOfRun(m.job_id, w.value("restart_count", int64_t{0}), started,
                                          w.value("restored_from", "")));
            jobs.push_back(std::move(m));
          }
          CEDANA_RETURN_IF_ERROR(catalog_.nodes().Touch(node, body.value("version", "")));
          CEDANA_RETURN_IF_ERROR(catalog_.jobs().SyncManaged(node, jobs));
          CEDANA_RETURN_IF_ERROR(catalog_.job_events().RecordRunStarts(starts));
          return Reply{200, {{"jobs", jobs.size()}}};
        });

  Route("GET", "/v1/agent/tasks", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          auto node = Query(req, "node");
          if (!node) return InvalidArgumentError("?node= is missing");
          CEDANA_ASSIGN_OR_RETURN(auto ops, catalog_.operations().Claim(*node));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& o : ops) out.push_back(ToJson(o));
          return Reply{200, out};
        });

  Route("POST", R"(/v1/agent/operations/(\d+))", Access::kAdmin,
        [this](const Principal&, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "operation id"));
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          CEDANA_ASSIGN_OR_RETURN(OperationRecord op, catalog_.operations().Get(id));
          std::string state = body.value("state", op.state);
          if (state != "running" && state != "done" && state != "failed")
            return InvalidArgumentError("state \"" + state + "\" (valid: running, done, failed)");
          op.state = state;
          op.phase = body.value("phase", op.phase);
          op.done_bytes = body.value("done_bytes", op.done_bytes);
          op.total_bytes = body.value("total_bytes", op.total_bytes);
          if (body.contains("checkpoint_id") && body["checkpoint_id"].is_string())
            op.checkpoint_id = body["checkpoint_id"].get<std::string>();
          if (body.contains("error") && body["error"].is_string())
            op.error = body["error"].get<std::string>();
          if (body.contains("phases")) {
            CEDANA_ASSIGN_OR_RETURN(op.phases_ms, PhasesIn(body["phases"]));
          }
          CEDANA_RETURN_IF_ERROR(catalog_.operations().Update(op));
          if (state == "done" || state == "failed") {
            log::Info("api: operation {} ({} of job {}) on {}: {}{}", op.id, op.kind,
                      op.job_id.value_or(0), op.node, state, op.error ? ": " + *op.error : "");
            if (services_.operation_finished) services_.operation_finished(op);
          }
          return Reply{200, ToJson(op)};
        });
}

}  // namespace cedana::controller
