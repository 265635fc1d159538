#include "daemon/tcp_policy.h"

#include <fmt/format.h>

namespace cedana::daemon {

Result<OutsideTcp> ParseOutsideTcp(const std::string& value) {
  if (std::optional<OutsideTcp> outside = ValueNamed(kOutsideTcpNames, value)) return *outside;
  return InvalidArgumentError(fmt::format(
      "tcp: '{}' is not one of {} (what a checkpoint does with a TCP connection to a peer "
      "outside the job)",
      value, ValueNames(kOutsideTcpNames)));
}

std::string TcpModeName(TcpMode mode) {
  switch (mode) {
    case TcpMode::kEstablished: return "established";
    case TcpMode::kClose: return "close";
    case TcpMode::kNone: break;
  }
  return "";
}

Result<TcpMode> ParseTcpModeName(const std::string& name) {
  if (name.empty()) return TcpMode::kNone;
  if (name == "established") return TcpMode::kEstablished;
  if (name == "close") return TcpMode::kClose;
  return InvalidArgumentError("the checkpoint's tcp mode '" + name +
                              "' is not established or close");
}

Result<TcpDecision> DecideTcp(const std::vector<engine::TcpConnection>& connections,
                              OutsideTcp outside) {
  TcpDecision d;
  if (connections.empty()) return d;
  const engine::TcpConnection* first_outside = nullptr;
  for (const engine::TcpConnection& c : connections) {
    if (!c.internal && first_outside == nullptr) first_outside = &c;
  }
  d.all_internal = first_outside == nullptr;
  if (d.all_internal || outside == OutsideTcp::kEstablished) {
    d.mode = TcpMode::kEstablished;
    return d;
  }
  if (outside == OutsideTcp::kClose) {
    d.mode = TcpMode::kClose;
    return d;
  }
  return UnsupportedError(fmt::format(
      "TCP connection to {} (from {}) is outside the job: checkpoint.tcp is refuse; set it (or "
      "the job's CEDANA_CHECKPOINT_TCP) to close (restored closed: the program sees a reset) or "
      "established (restored connected, on the same node only), or dump with --tcp-close or "
      "--tcp-established",
      engine::FormatEndpoint(first_outside->remote), engine::FormatEndpoint(first_outside->local)));
}

Result<TcpDecision> DecideTcpForTree(engine::ProcessControl& processes, pid_t root,
                                     OutsideTcp outside, bool criu_unprivileged) {
  Result<engine::TreeTcp> sockets = processes.ReadTcp(root);
  if (!sockets.has_value())
    return sockets.error().WithContext(fmt::format("listing the TCP sockets of pid {}", root));
  Result<TcpDecision> decided = DecideTcp(sockets->connections, outside);
  if (!decided.has_value()) return decided.error().WithContext(fmt::format("pid {}", root));
  if (decided->mode == TcpMode::kEstablished && criu_unprivileged)
    return UnsupportedError(
        fmt::format("pid {}: it holds TCP connections, whose checkpoint needs CRIU's "
                    "network lock, and CRIU runs as the job's owner (unprivileged mode) without "
                    "the right to set it",
                    root));
  decided->ports = std::move(sockets->local_ports);
  return decided;
}

}  // namespace cedana::daemon
