// /v1/maintenance: the MAINT reservations the controller tracks, with the jobs each one moved.
// Windows are cluster facts every token sees; moves are per job, so a user token sees only
// its own jobs' moves.
#include <httplib.h>

#include <map>

#include "controller/http/api_json.h"
#include "controller/http/api_server.h"

namespace cedana::controller {

void ApiServer::RegisterMaintenanceRoutes() {
  Route(Method::kGet, "/v1/maintenance", Access::kToken,
        [this](const Principal& p, const httplib::Request&) -> Result<Reply> {
          CEDANA_ASSIGN_OR_RETURN(auto windows, catalog_.maintenance().ListWindows());
          CEDANA_ASSIGN_OR_RETURN(auto moves, catalog_.maintenance().ListMoves(p.OwnerFilter()));
          std::map<std::string, nlohmann::json> moved;
          for (const auto& m : moves) moved[m.window].push_back(ToJson(m));
          nlohmann::json out = nlohmann::json::array();
          for (const auto& w : windows) {
            nlohmann::json j = ToJson(w);
            auto it = moved.find(w.name);
            j["moves"] = it == moved.end() ? nlohmann::json::array() : it->second;
            out.push_back(std::move(j));
          }
          return Reply{200, out};
        });
}

}  // namespace cedana::controller
