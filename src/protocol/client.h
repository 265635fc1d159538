// DaemonClient: one request to the node daemon over its unix socket, with progress callbacks.
// Used by the CLI (and later the SLURM proxy). Not thread-safe; cheap to create per call.
#pragma once

#include <functional>
#include <string>

#include "protocol/daemon_request.h"
#include "protocol/wire.h"

namespace cedana::protocol {

using ProgressHandler = std::function<void(const Message& progress)>;

// Sends `request` (adds "v") and returns the final result's fields, or its error as a Status.
// kUnavailable, naming the socket, when the daemon is not running.
Result<Message> CallDaemon(const std::string& socket_path, Message request,
                           const ProgressHandler& on_progress = {});

// The same with a typed request and its reply parsed (daemon_reply.h): a reply that does not
// parse is an error too.
template <typename Reply>
Result<Reply> CallDaemon(const std::string& socket_path, const DaemonRequest& request,
                         Result<Reply> (*parse)(const Message&),
                         const ProgressHandler& on_progress = {}) {
  CEDANA_ASSIGN_OR_RETURN(Message reply,
                          CallDaemon(socket_path, EncodeDaemonRequest(request), on_progress));
  Result<Reply> typed = parse(reply);
  if (!typed.has_value()) return typed.error().WithContext("the node daemon's reply");
  return typed;
}

}  // namespace cedana::protocol
