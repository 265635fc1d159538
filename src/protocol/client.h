// DaemonClient: one request to the node daemon over its unix socket, with progress callbacks.
// Used by the CLI (and later the SLURM proxy). Not thread-safe; cheap to create per call.
#pragma once

#include <functional>
#include <string>

#include "protocol/wire.h"

namespace cedana::protocol {

using ProgressHandler = std::function<void(const Message& progress)>;

// Sends `request` (adds "v") and returns the final result's fields, or its error as a Status.
// kUnavailable, naming the socket, when the daemon is not running.
Result<Message> CallDaemon(const std::string& socket_path, Message request,
                           const ProgressHandler& on_progress = {});

}  // namespace cedana::protocol
