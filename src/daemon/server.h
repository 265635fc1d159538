// Server: the node daemon's unix-socket front door. One thread per connection; each request is
// authorised by the peer's credentials (SO_PEERCRED) and dispatched to a handler. Start-up
// (config, CRIU probe, cluster key, socket) lives in RunDaemon.
#pragma once

#include "common/config.h"

namespace cedana::daemon {

// Runs the daemon in the foreground until SIGTERM/SIGINT. Returns the process exit code.
int RunDaemon(const Config& config);

}  // namespace cedana::daemon
