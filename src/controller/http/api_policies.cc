// /v1/policies. A user token's policies belong to that user and select only that user's jobs
// (the scheduler enforces it); an admin's select any job.
#include <httplib.h>

#include "common/log.h"
#include "controller/http/api_json.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"

namespace cedana::controller {

void ApiServer::RegisterPolicyRoutes() {
  auto visible = [this](const Principal& p, int64_t id) -> Result<PolicyRecord> {
    CEDANA_ASSIGN_OR_RETURN(PolicyRecord pol, catalog_.policies().Get(id));
    if (!p.Sees(pol.owner)) return NotFoundError(fmt::format("policy {} not found", id));
    return pol;
  };

  Route(Method::kGet, "/v1/policies", Access::kToken,
        [this](const Principal& p, const httplib::Request&) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(auto list, catalog_.policies().List(p.OwnerFilter()));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& pol : list) out.push_back(ToJson(pol));
          return Reply{200, out};
        });

  Route(Method::kPost, "/v1/policies", Access::kToken,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord pol, PolicyFromJson(body));
          pol.owner = p.user;
          pol.owner_is_admin = p.admin;
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord created, catalog_.policies().Create(pol));
          log::Info("api: {} created policy {} \"{}\" (every {} s)", p.user, created.id,
                    created.name, created.interval_seconds);
          return Reply{201, ToJson(created)};
        });

  Route(Method::kGet, R"(/v1/policies/(\d+))", Access::kToken,
        [visible](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "policy id"));
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord pol, visible(p, id));
          return Reply{200, ToJson(pol)};
        });

  Route(Method::kPut, R"(/v1/policies/(\d+))", Access::kToken,
        [this, visible](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "policy id"));
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord old, visible(p, id));
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord pol, PolicyFromJson(body));
          pol.id = id;
          pol.owner = old.owner;
          CEDANA_RETURN_IF_ERROR(catalog_.policies().Update(pol));
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord updated, catalog_.policies().Get(id));
          return Reply{200, ToJson(updated)};
        });

  Route(Method::kDelete, R"(/v1/policies/(\d+))", Access::kToken,
        [this, visible](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "policy id"));
          CEDANA_ASSIGN_OR_RETURN(PolicyRecord pol, visible(p, id));
          CEDANA_RETURN_IF_ERROR(catalog_.policies().Delete(id));
          log::Info("api: {} deleted policy {} \"{}\"", p.user, id, pol.name);
          return Reply{204, nullptr};
        });
}

}  // namespace cedana::controller
