// The controller, `cedana-slurm daemon` (docs/controller.md): opens and migrates the catalog,
// serves the API, web UI and installer, and runs one watcher thread that keeps the catalog current:
// SLURM jobs every 2 s, the checkpoint index every 5 s (and right after a dump finished),
// policies every second, retention of policy checkpoints, and operations whose node never
// answered. Runs in the foreground until SIGTERM/SIGINT.
#pragma once

#include "common/config.h"

namespace cedana::controller {

// Returns the process exit code.
int RunController(const Config& config);

// `cedana-slurm token create`: a token for `user` straight in the catalog (on the controller's
// host, as root). Prints the token.
int CreateTokenCommand(const Config& config, const std::string& user, bool admin);

}  // namespace cedana::controller
