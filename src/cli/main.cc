// cedana: the node CLI and daemon. `cedana daemon start` runs the node daemon; the other
// commands talk to it over its unix socket.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"
#include "common/capabilities.h"

int main(int argc, char** argv) {
  // Unprivileged mode gives this binary file capabilities (the seeds' setcap); the node daemon
  // runs CRIU, so a user's cedana never needs them. See common/capabilities.h.
  cedana::DropProcessCapabilities();
  try {
    cedana::cli::CliContext ctx;
    CLI::App app{"cedana: checkpoint and restore of SLURM jobs and other workloads with CRIU"};
    app.require_subcommand(1);
    app.fallthrough();
    cedana::cli::AddDaemonCommand(app, ctx);
    cedana::cli::AddShimCommand(app, ctx);
    cedana::cli::AddRunCommand(app, ctx);
    cedana::cli::AddDumpCommand(app, ctx);
    cedana::cli::AddRestoreCommand(app, ctx);
    cedana::cli::AddPsCommand(app, ctx);
    cedana::cli::AddKillCommand(app, ctx);
    cedana::cli::AddCheckpointsCommand(app, ctx);
    cedana::cli::AddVersionCommand(app, ctx);
    cedana::cli::AddConfigCommand(app, ctx);
    cedana::cli::AddPluginCommand(app, ctx);
    cedana::cli::AddSlurmCommand(app, ctx);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return ctx.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cedana: internal error: %s\n", e.what());
    return 70;
  }
}
