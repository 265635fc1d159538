// /v1/jobs (with a job's timeline) and /v1/operations.
#include <httplib.h>

#include "controller/http/api_json.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"
#include "controller/timeline/job_events.h"

namespace cedana::controller {

void ApiServer::RegisterJobRoutes() {
  Route(Method::kGet, "/v1/jobs", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          JobFilter f;
          f.user = p.OwnerFilter();
          if (!f.user) f.user = Query(req, "user");
          f.state = Query(req, "state");
          if (auto e = Query(req, "enabled")) {
            if (*e != "true" && *e != "false")
              return InvalidArgumentError("?enabled= takes true or false, not " + *e);
            f.enabled = *e == "true";
          }
          CEDANA_ASSIGN_OR_RETURN(PageRequest page, PageOf(req));
          CEDANA_ASSIGN_OR_RETURN(Paged<JobRecord> jobs, catalog_.jobs().ListPage(f, page));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& j : jobs.items) out.push_back(ToJson(j));
          return Reply{200, out, jobs.next};
        });

  Route(Method::kGet, R"(/v1/jobs/(\d+))", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "job id"));
          CEDANA_ASSIGN_OR_RETURN(JobRecord j, catalog_.jobs().Get(id));
          if (!p.Sees(j.user)) return NotFoundError(fmt::format("job {} not found", id));
          return Reply{200, ToJson(j)};
        });

  // The job's life on one time axis: its events and its checkpoints (timeline/job_events.h).
  Route(Method::kGet, R"(/v1/jobs/(\d+)/timeline)", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "job id"));
          CEDANA_ASSIGN_OR_RETURN(JobRecord j, catalog_.jobs().Get(id));
          if (!p.Sees(j.user)) return NotFoundError(fmt::format("job {} not found", id));
          CEDANA_ASSIGN_OR_RETURN(std::vector<JobEvent> events, catalog_.job_events().List(id));
          CEDANA_ASSIGN_OR_RETURN(std::vector<CheckpointRecord> checkpoints,
                                  catalog_.checkpoints().List({j.user, std::nullopt, id}));
          nlohmann::json out = nlohmann::json::array();
          for (const JobEvent& e : JobTimeline(std::move(events), checkpoints))
            out.push_back(ToJson(e));
          return Reply{200, {{"job", ToJson(j)}, {"events", out}, {"now_ms", NowMs()}}};
        });

  Route(Method::kPost, R"(/v1/jobs/(\d+)/checkpoint)", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "job id"));
          CEDANA_ASSIGN_OR_RETURN(JobRecord j, catalog_.jobs().Get(id));
          if (!p.Sees(j.user)) return NotFoundError(fmt::format("job {} not found", id));
          if (!j.enabled || j.agent_node.empty())
            return FailedPreconditionError(fmt::format(
                "job {} is not managed by cedana (submit it with CEDANA_ENABLE=1)", id));
          OperationRecord op;
          op.kind = OperationKind::kDump;
          op.job_id = id;
          op.node = j.agent_node;
          op.owner = j.user;
          CEDANA_ASSIGN_OR_RETURN(OperationRecord created, catalog_.operations().Create(op));
          return Reply{202, ToJson(created)};
        });

  Route(Method::kGet, "/v1/operations", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          std::optional<OperationState> state;
          if (std::optional<std::string> word = Query(req, "state")) {
            state = ValueNamed(kOperationStateNames, *word);
            if (!state)
              return InvalidArgumentError("?state=" + *word + " is none of " +
                                          ValueNames(kOperationStateNames));
          }
          CEDANA_ASSIGN_OR_RETURN(auto ops,
                                  catalog_.operations().List(p.OwnerFilter(), state, 100));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& o : ops) out.push_back(ToJson(o));
          return Reply{200, out};
        });

  Route(Method::kGet, R"(/v1/operations/(\d+))", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "operation id"));
          CEDANA_ASSIGN_OR_RETURN(OperationRecord o, catalog_.operations().Get(id));
          if (!p.Sees(o.owner)) return NotFoundError(fmt::format("operation {} not found", id));
          return Reply{200, ToJson(o)};
        });
}

}  // namespace cedana::controller
