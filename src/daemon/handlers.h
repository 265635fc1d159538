// Handlers: one function per request op of the node daemon's protocol (protocol/wire.h).
// Each takes the request and the caller, may send progress messages, and returns the result
// fields or an error. Thread-safe (NodeContext is).
#pragma once

#include <functional>

#include "daemon/node_context.h"
#include "protocol/daemon_request.h"
#include "protocol/wire.h"

namespace cedana::daemon {

using SendProgress = std::function<void(const protocol::Message&)>;

// Parses the request (protocol::ParseDaemonRequest: kInvalidArgument for a bad version, an
// unknown op or a malformed field) and dispatches on its op.
Result<protocol::Message> HandleRequest(NodeContext& node, const Caller& caller,
                                        const protocol::Message& request,
                                        const SendProgress& send_progress);

}  // namespace cedana::daemon
