// ApiServer: the controller's HTTP side on one port: the REST API under /v1 (docs/api.md), the
// web UI's files at /, and the installer at /install. Handlers run on cpp-httplib's worker
// threads; each turns its Status into an HTTP answer through one table (HttpStatusOf), and no
// exception leaves a handler. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/config.h"
#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace cedana::controller {

// Who is calling, from the bearer token.
struct Principal {
  std::string user;
  bool admin = false;
  // Objects of `owner` are visible to this caller.
  bool Sees(const std::string& owner) const { return admin || owner == user; }
  // The owner filter of list calls: none for admins.
  std::optional<std::string> OwnerFilter() const {
    return admin ? std::nullopt : std::optional<std::string>(user);
  }
};

// What the handlers need besides the catalog.
struct ApiServices {
  // Re-reads the checkpoint storage into the catalog now (after a dump finished, a deletion).
  std::function<void()> refresh_checkpoints;
  // Called when an agent reports an operation as done (retention of its policy).
  std::function<void(const OperationRecord&)> operation_finished;
};

struct Reply {
  Reply() = default;
  Reply(int status, nlohmann::json body, std::string next_after = "")
      : status(status), body(std::move(body)), next_after(std::move(next_after)) {}
  int status = 200;
  nlohmann::json body;
  // A listing's next page: sent as X-Next-After, given back as ?after= ("" = the last page).
  std::string next_after;
};

class ApiServer {
 public:
  ApiServer(const Config& config, Catalog& catalog, ApiServices services);
  ~ApiServer();

  // Binds config.controller.listen; kUnavailable when the address is taken.
  Status Start();
  void Stop();
  int port() const { return port_; }

  // kInvalidArgument -> 400 and so on (docs/api.md, "Errors").
  static int HttpStatusOf(Code code);

 private:
  using Handler = std::function<Result<Reply>(const Principal&, const httplib::Request&)>;
  enum class Access { kToken, kAdmin };

  // The methods the API answers; a route's method is one of them by type.
  enum class Method { kGet, kPost, kPut, kDelete };
  void Route(Method method, const std::string& pattern, Access access, Handler handler);
  // nullopt (with the reason in *why) when the request carries no valid token.
  Result<std::optional<Principal>> Authenticate(const httplib::Request& req, std::string* why);
  void RegisterRoutes();
  void RegisterJobRoutes();
  void RegisterMaintenanceRoutes();
  void RegisterCheckpointRoutes();
  void RegisterPolicyRoutes();
  void RegisterAdminRoutes();
  void RegisterAgentRoutes();
  void RegisterInstallerRoutes();

  const Config& config_;
  Catalog& catalog_;
  const ApiServices services_;
  const std::string admin_token_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// The error body of docs/api.md: {"error": {"code": "not_found", "message": "..."}}.
nlohmann::json ErrorBody(const Status& s);

}  // namespace cedana::controller
