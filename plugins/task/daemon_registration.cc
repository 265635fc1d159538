#include "task/daemon_registration.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/bounded_json.h"
#include "protocol/daemon_reply.h"
#include "protocol/daemon_request.h"
#include "protocol/wire.h"

namespace cedana::plugins {
namespace {

// Milliseconds left until `deadline`, at least 0.
int MsLeft(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Sends `request` and returns the first line of the answer; on failure, "" and *error.
std::string Exchange(const std::string& socket_path, const std::string& request,
                     std::chrono::milliseconds timeout, std::string* error) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *error = "socket path too long: " + socket_path;
    return "";
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return "";
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *error = "cannot reach the node daemon at " + socket_path + ": " + std::strerror(errno);
    return "";
  }
  size_t sent = 0;
  while (sent < request.size()) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, MsLeft(deadline)) <= 0) {
      *error = "the node daemon did not take the request in time";
      return "";
    }
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      *error = std::string("send: ") + std::strerror(errno);
      return "";
    }
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string reply;
  while (reply.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, MsLeft(deadline)) <= 0) {
      *error = "the node daemon did not answer in time";
      return "";
    }
    char buf[512];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) {
      *error = "the node daemon closed the connection";
      return "";
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      *error = std::string("recv: ") + std::strerror(errno);
      return "";
    }
    if (n > 0) reply.append(buf, static_cast<size_t>(n));
    if (reply.size() > 64 * 1024) {
      *error = "the node daemon's answer is too long";
      return "";
    }
  }
  reply.resize(reply.find('\n'));
  return reply;
}

}  // namespace

std::string RegisterBatchJob(const std::string& socket_path, uint32_t job_id, uint32_t uid,
                             std::chrono::milliseconds deadline) {
  protocol::DaemonRequest req = protocol::RequestOf(protocol::DaemonOp::kSlurmJobStart);
  req.job_id = std::to_string(job_id);
  req.uid = uid;
  std::string error;
  const std::string line =
      Exchange(socket_path,
               protocol::EncodeMessage(protocol::WithVersion(protocol::EncodeDaemonRequest(req))),
               deadline, &error);
  if (!error.empty()) return error;
  Result<protocol::Message> reply = ParseBoundedJson(line);
  if (!reply.has_value() || !reply->is_object())
    return "the node daemon's answer is not a protocol message: " + line.substr(0, 200);
  if (Status s = protocol::StatusFromResult(*reply); !s.ok())
    return "the node daemon refused: " + s.message();
  Result<protocol::SlurmJobRegistered> registered = protocol::ParseSlurmJobRegistered(*reply);
  if (!registered.has_value()) return "the node daemon's answer: " + registered.error().message();
  if (registered->job_id != req.job_id || registered->uid != uid)
    return "the node daemon registered job " + registered->job_id + " of uid " +
           std::to_string(registered->uid) + " instead";
  return "";
}

}  // namespace cedana::plugins
