#include "daemon/metrics_server.h"

#include <httplib.h>

#include "common/log.h"

namespace cedana::daemon {

MetricsServer::MetricsServer(const NodeMetrics& metrics) : metrics_(metrics) {}

MetricsServer::~MetricsServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

Status MetricsServer::Start(int port) {
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.Text(), "text/plain; version=0.0.4");
  });
  if (!server_->bind_to_port("127.0.0.1", port))
    return UnavailableError("cannot listen on 127.0.0.1:" + std::to_string(port) +
                            " for daemon.metrics_port (in use?)");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  log::Info("daemon: metrics on http://127.0.0.1:{}/metrics", port);
  return OkStatus();
}

}  // namespace cedana::daemon
