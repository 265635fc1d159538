// /v1/nodes and /v1/tokens: admin only.
#include <httplib.h>

#include "common/label.h"
#include "common/log.h"
#include "controller/http/api_json.h"
#include "controller/http/api_server.h"
#include "controller/http/request_params.h"
#include "protocol/field_reader.h"

namespace cedana::controller {

void ApiServer::RegisterAdminRoutes() {
  Route(Method::kGet, "/v1/nodes", Access::kAdmin,
        [this](const Principal&, const httplib::Request&) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(auto nodes, catalog_.nodes().List());
          nlohmann::json out = nlohmann::json::array();
          int64_t now = NowMs();
          for (const auto& n : nodes) out.push_back(ToJson(n, now));
          return Reply{200, out};
        });

  Route(Method::kGet, "/v1/tokens", Access::kAdmin,
        [this](const Principal&, const httplib::Request&) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(auto tokens, catalog_.tokens().List());
          nlohmann::json out = nlohmann::json::array();
          for (const auto& t : tokens) out.push_back(ToJson(t));
          return Reply{200, out};
        });

  Route(Method::kPost, "/v1/tokens", Access::kAdmin,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(nlohmann::json body, ParseBody(req.body));
          protocol::FieldReader fields(body, "body");
          std::string user;
          bool admin = false;
          CEDANA_RETURN_IF_ERROR(fields.String("user", &user));
          CEDANA_RETURN_IF_ERROR(fields.Bool("admin", &admin));
          // User names reach paths of the checkpoint store: same rules as labels.
          CEDANA_RETURN_IF_ERROR(ValidateLabel(user)) << "user";
          CEDANA_ASSIGN_OR_RETURN(auto created, catalog_.tokens().Create(user, admin));
          log::Info("api: {} created token {} for {}{}", p.user, created.first, user,
                    admin ? " (admin)" : "");
          return Reply{
              201,
              {{"id", created.first}, {"user", user}, {"admin", admin}, {"token", created.second}}};
        });

  Route(Method::kDelete, R"(/v1/tokens/(\d+))", Access::kAdmin,
        [this](const Principal& p, const httplib::Request& req) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(int64_t id, PathId(req, "token id"));
          CEDANA_RETURN_IF_ERROR(catalog_.tokens().Delete(id));
          log::Info("api: {} deleted token {}", p.user, id);
          return Reply{204, nullptr};
        });
}

}  // namespace cedana::controller
