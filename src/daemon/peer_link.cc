#include "daemon/peer_link.h"

#include <fcntl.h>
#include <unistd.h>

#include <httplib.h>

#include <fmt/format.h>

#include "common/log.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "protocol/wire.h"

namespace cedana::daemon {
namespace {

// A credential is a few hundred bytes; a message of ours a few KiB.
constexpr size_t kMaxCredentialBytes = 1 << 20;

// `text` on a pipe's read end, for a child's stdin (it fits the pipe's buffer: checked).
Result<UniqueFd> InputPipe(const std::string& text) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoStatus(errno, "making a pipe");
  UniqueFd r(p[0]), w(p[1]);
  if (text.size() > 65536) return InvalidArgumentError("a peer credential over 64 KiB");
  if (::write(w.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return ErrnoStatus(errno, "writing to a pipe");
  return r;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<std::string> SealForPeer(const nlohmann::json& message) {
  subprocess::Command c;
  c.argv = {"munge", "-s", message.dump()};
  std::string out;
  CEDANA_ASSIGN_OR_RETURN(subprocess::Exit e,
                          subprocess::Run(c, subprocess::Output::kStdoutAndStderr, &out));
  if (!e.ok()) return UnavailableError(fmt::format("munge {}: {}", e.Describe(), Trimmed(out)));
  return Trimmed(out);
}

Result<nlohmann::json> UnsealFromPeer(const std::string& credential) {
  if (credential.size() > kMaxCredentialBytes)
    return InvalidArgumentError("a peer request over 1 MiB");
  CEDANA_ASSIGN_OR_RETURN(UniqueFd in, InputPipe(credential));
  subprocess::Command c;
  // Numeric metadata, only the uid: "UID: 0", an empty line, then the payload.
  c.argv = {"unmunge", "-N", "-k", "UID"};
  c.fds = {{0, in.get()}};
  std::string out;
  CEDANA_ASSIGN_OR_RETURN(subprocess::Exit e,
                          subprocess::Run(c, subprocess::Output::kStdout, &out));
  if (!e.ok())
    return PermissionDeniedError(fmt::format("unmunge refused the credential ({})", e.Describe()));
  const size_t blank = out.find("\n\n");
  if (blank == std::string::npos || out.rfind("UID:", 0) != 0)
    return InternalError("unmunge's output has no UID line");
  std::string uid = Trimmed(out.substr(4, blank - 4));
  uid.erase(0, uid.find_first_not_of(' '));
  if (uid != "0")
    return PermissionDeniedError(
        fmt::format("a peer request made by uid {}: only a node daemon (root) may ask", uid));
  nlohmann::json message = nlohmann::json::parse(out.substr(blank + 2), nullptr, false);
  if (message.is_discarded() || !message.is_object())
    return InvalidArgumentError("a peer request that is no JSON object");
  return message;
}

PeerServer::PeerServer() : server_(std::make_unique<httplib::Server>()) {}

PeerServer::~PeerServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void PeerServer::Handle(const std::string& name, PeerHandler handler) {
  server_->Post("/" + name, [name, handler](const httplib::Request& req, httplib::Response& res) {
    Result<nlohmann::json> answer = [&]() -> Result<nlohmann::json> {
      CEDANA_ASSIGN_OR_RETURN(nlohmann::json request, UnsealFromPeer(req.body));
      return handler(request);
    }();
    if (!answer.has_value())
      log::Warn("peer: {} from {}: {}", name, req.remote_addr, answer.error().ToString());
    const nlohmann::json reply = answer.has_value() ? protocol::OkResult(std::move(answer).value())
                                                    : protocol::ErrorResult(answer.error());
    Result<std::string> sealed = SealForPeer(reply);
    if (!sealed.has_value()) {
      res.status = 500;
      return;
    }
    res.set_content(*sealed, "text/plain");
  });
}

Status PeerServer::Start(int port) {
  if (!server_->bind_to_port("0.0.0.0", port))
    return UnavailableError(fmt::format(
        "cannot listen on port {} for daemon.peer_port (in use?): jobs over several nodes are "
        "not checkpointed from this node",
        port));
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  log::Info("daemon: node daemons reach this one on port {} (daemon.peer_port)", port);
  return OkStatus();
}

Result<nlohmann::json> CallPeer(const std::string& host, int port, const std::string& name,
                                const nlohmann::json& request, std::chrono::seconds timeout) {
  const std::string where = fmt::format("the node daemon at {}:{}", host, port);
  CEDANA_ASSIGN_OR_RETURN(std::string body, SealForPeer(request));
  httplib::Client client(host, port);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(timeout);
  client.set_write_timeout(std::chrono::seconds(10));
  httplib::Result res = client.Post("/" + name, body, "text/plain");
  if (!res)
    return UnavailableError(
        fmt::format("{} did not answer {}: {}", where, name, httplib::to_string(res.error())));
  if (res->status != 200)
    return UnavailableError(fmt::format("{} answered {} with HTTP {}", where, name, res->status));
  Result<nlohmann::json> reply = UnsealFromPeer(res->body);
  if (!reply.has_value()) return reply.error().WithContext(where + "'s answer");
  if (Status s = protocol::StatusFromResult(*reply); !s.ok()) return s.WithContext(where);
  return reply;
}

}  // namespace cedana::daemon
