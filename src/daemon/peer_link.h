// PeerLink: node daemons asking each other, for a job checkpointed over several nodes
// (daemon/step_parts.h). HTTP on daemon.peer_port, every body both ways a munge credential whose
// payload is the JSON message: munge's key is the cluster's (SLURM's own authentication), so a
// request is known to come from root on a node of the cluster, and an answer too. A user on a
// node can reach the port but cannot make root's credential; munge refuses a credential used
// twice or older than its time to live (5 minutes).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace httplib {
class Server;
}

namespace cedana::daemon {

// `message` as a munge credential (munge -s).
Result<std::string> SealForPeer(const nlohmann::json& message);
// The message of a munge credential made by root; kPermissionDenied naming the uid for any
// other, the error of unmunge for one it refuses (forged, replayed, expired).
Result<nlohmann::json> UnsealFromPeer(const std::string& credential);

// A request's answer: a message, or an error carried back to the asking daemon.
using PeerHandler = std::function<Result<nlohmann::json>(const nlohmann::json& request)>;

class PeerServer {
 public:
  PeerServer();
  ~PeerServer();  // stops serving and joins its thread (requests in flight finish)
  PeerServer(const PeerServer&) = delete;
  PeerServer& operator=(const PeerServer&) = delete;

  // Before Start: serves POST /<name>.
  void Handle(const std::string& name, PeerHandler handler);
  // Binds 0.0.0.0:`port` before it returns: kUnavailable naming the port when it cannot.
  Status Start(int port);

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

// Asks the node daemon at host:port; `timeout` bounds the whole call. The error names the node.
Result<nlohmann::json> CallPeer(const std::string& host, int port, const std::string& name,
                                const nlohmann::json& request, std::chrono::seconds timeout);

}  // namespace cedana::daemon
