#include "controller/http/api_server.h"

#include <httplib.h>
#include <openssl/crypto.h>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/version.h"
#include "controller/http/connection_threads.h"
#include "controller/metrics/controller_metrics.h"

namespace cedana::controller {
namespace {

// The largest request body: policies, tokens and agent reports are a few KiB.
constexpr size_t kMaxRequestBodyBytes = 1 << 20;
// Connections served at once, each on its own thread (ConnectionThreads).
constexpr size_t kMaxConnectionThreads = 512;

// "invalid argument" -> "invalid_argument": the error codes of docs/api.md.
std::string ApiCode(Code c) {
  std::string name(CodeName(c));
  for (char& ch : name)
    if (ch == ' ') ch = '_';
  return name;
}

bool SameSecret(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

nlohmann::json ErrorBody(const Status& s) {
  // Our own bug (a failed SQL statement, say): its text is for the controller's log, which has
  // it, not for the caller, whom it would tell about the schema and nothing they can act on.
  const std::string message = s.code() == Code::kInternal
                                  ? "internal error in the controller; its log has the details"
                                  : s.message();
  return {{"error", {{"code", ApiCode(s.code())}, {"message", message}}}};
}

int ApiServer::HttpStatusOf(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kInvalidArgument: return 400;
    case Code::kPermissionDenied: return 403;
    case Code::kNotFound: return 404;
    case Code::kAlreadyExists:
    case Code::kFailedPrecondition:
    case Code::kAborted: return 409;
    case Code::kUnsupported: return 422;
    case Code::kUnavailable: return 503;
    case Code::kDeadlineExceeded: return 504;
    case Code::kInternal: return 500;
  }
  return 500;
}

ApiServer::ApiServer(const Config& config, Catalog& catalog, ApiServices services)
    : config_(config),
      catalog_(catalog),
      services_(std::move(services)),
      admin_token_(config.auth_token),
      server_(std::make_unique<httplib::Server>()) {
  // Anyone who reaches the port may send: bodies are bounded before any handler (and so any
  // token check) runs, answered 413; slow or idle clients hold only their own threads, and a
  // read that stalls or an idle keep-alive connection ends after a few seconds.
  server_->set_payload_max_length(kMaxRequestBodyBytes);
  server_->set_read_timeout(std::chrono::seconds(5));
  server_->set_write_timeout(std::chrono::seconds(5));
  server_->set_keep_alive_timeout(2);
  server_->new_task_queue = [] { return new ConnectionThreads(kMaxConnectionThreads); };
  RegisterRoutes();
}

ApiServer::~ApiServer() { Stop(); }

Result<std::optional<Principal>> ApiServer::Authenticate(const httplib::Request& req,
                                                         std::string* why) {
  std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.rfind(kBearer, 0) != 0 || header.size() == kBearer.size()) {
    *why = "no token: send Authorization: Bearer <token>";
    return std::optional<Principal>();
  }
  std::string token = header.substr(kBearer.size());
  if (!admin_token_.empty() && SameSecret(token, admin_token_))
    return std::optional<Principal>(Principal{"root", true});
  Result<TokenRecord> t = catalog_.tokens().Find(token);
  if (!t.has_value()) {
    if (t.error().code() != Code::kNotFound) return t.error();
    *why = "unknown token";
    return std::optional<Principal>();
  }
  return std::optional<Principal>(Principal{t->user, t->admin});
}

void ApiServer::Route(Method method, const std::string& pattern, Access access, Handler handler) {
  static constexpr const char* kNames[] = {"GET", "POST", "PUT", "DELETE"};
  const char* name = kNames[static_cast<int>(method)];
  auto wrapped = [this, access, handler = std::move(handler), method = name](
                     const httplib::Request& req, httplib::Response& res) {
    Reply reply;
    try {
      std::string why;
      Result<std::optional<Principal>> who = Authenticate(req, &why);
      if (!who.has_value()) {
        res.status = HttpStatusOf(who.error().code());
        res.set_content(ErrorBody(who.error()).dump(), "application/json");
        return;
      }
      if (!who->has_value()) {
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer");
        res.set_content(
            nlohmann::json{{"error", {{"code", "unauthenticated"}, {"message", why}}}}.dump(),
            "application/json");
        return;
      }
      const Principal& caller = **who;
      if (access == Access::kAdmin && !caller.admin) {
        res.status = 403;
        res.set_content(ErrorBody(PermissionDeniedError("this call needs the admin token")).dump(),
                        "application/json");
        return;
      }
      Result<Reply> r = handler(caller, req);
      if (!r.has_value()) {
        if (r.error().code() == Code::kInternal)
          log::Error("api: {} {}: {}", method, req.path, r.error().ToString());
        res.status = HttpStatusOf(r.error().code());
        res.set_content(ErrorBody(r.error()).dump(), "application/json");
        return;
      }
      reply = std::move(r).value();
    } catch (const std::exception& e) {
      // Handlers read their bodies with typed readers (protocol/field_reader.h) that return a
      // 400 naming the field; an exception, JSON's included, is a bug of ours.
      log::Error("api: {} {}: internal error: {}", method, req.path, e.what());
      res.status = 500;
      res.set_content(ErrorBody(InternalError("internal error (logged)")).dump(),
                      "application/json");
      return;
    }
    res.status = reply.status;
    if (!reply.next_after.empty()) res.set_header("X-Next-After", reply.next_after);
    if (reply.status != 204) res.set_content(reply.body.dump(), "application/json");
  };
  switch (method) {
    case Method::kGet: server_->Get(pattern, wrapped); break;
    case Method::kPost: server_->Post(pattern, wrapped); break;
    case Method::kPut: server_->Put(pattern, wrapped); break;
    case Method::kDelete: server_->Delete(pattern, wrapped); break;
  }
}

void ApiServer::RegisterRoutes() {
  server_->Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
    Status db = catalog_.db().Exec("SELECT 1");
    nlohmann::json body = {{"status", db.ok() ? "ok" : "degraded"},
                           {"version", kVersion},
                           {"database", catalog_.db().Driver()}};
    if (!db.ok()) body["error"] = db.message();
    res.status = db.ok() ? 200 : 503;
    res.set_content(body.dump(), "application/json");
  });
  // Prometheus scrapes this; it names no user or job, so it needs no token (docs/controller.md).
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    constexpr int64_t kRecentMs = 120'000;
    Result<CatalogFigures> figures = catalog_.Figures(NowMs() - kRecentMs);
    if (!figures.has_value()) {
      res.status = 503;
      res.set_content("catalog unavailable: " + figures.error().message() + "\n", "text/plain");
      return;
    }
    res.set_content(RenderControllerMetrics(*figures), "text/plain; version=0.0.4; charset=utf-8");
  });
  Route(Method::kGet, "/v1/whoami", Access::kToken,
        [](const Principal& p, const httplib::Request&) -> Result<Reply> {
          return Reply{200, {{"user", p.user}, {"admin", p.admin}}};
        });
  RegisterJobRoutes();
  RegisterMaintenanceRoutes();
  RegisterCheckpointRoutes();
  RegisterPolicyRoutes();
  RegisterAdminRoutes();
  RegisterAgentRoutes();
  RegisterInstallerRoutes();
  // Unknown /v1 paths answer in JSON too.
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty() && req.path.rfind("/v1/", 0) == 0) {
      res.set_content(ErrorBody(NotFoundError("no such API path: " + req.path)).dump(),
                      "application/json");
    }
  });
  if (fs::Exists(config_.controller.web_dir)) {
    server_->set_mount_point("/", config_.controller.web_dir);
  } else {
    log::Warn("api: web UI dir {} does not exist; the UI is not served",
              config_.controller.web_dir);
  }
}

Status ApiServer::Start() {
  const std::string& listen = config_.controller.listen;
  size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  int port = std::stoi(listen.substr(colon + 1));
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ < 0) return UnavailableError("cannot listen on " + listen);
  } else {
    if (!server_->bind_to_port(host, port))
      return UnavailableError(
          fmt::format("cannot listen on {} (in use, or not an address of this host)", listen));
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  log::Info("api: listening on {}:{}", host, port_);
  return OkStatus();
}

void ApiServer::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

}  // namespace cedana::controller
