// MetricsServer: the node daemon's GET /metrics on 127.0.0.1:<daemon.metrics_port>, its
// NodeMetrics in Prometheus's text format, for a Prometheus agent on the node (anything else is
// 404). Loopback only: the figures are the node's business, and the unix socket stays the
// daemon's one door for requests. Off unless the port is set.
#pragma once

#include <memory>
#include <thread>

#include "common/status.h"
#include "daemon/node_metrics.h"

namespace httplib {
class Server;
}

namespace cedana::daemon {

class MetricsServer {
 public:
  explicit MetricsServer(const NodeMetrics& metrics);
  ~MetricsServer();  // stops serving and joins its thread
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds before it returns: kUnavailable naming the port when it cannot be bound.
  Status Start(int port);

 private:
  const NodeMetrics& metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace cedana::daemon
