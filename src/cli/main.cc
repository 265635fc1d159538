// cedana: the node CLI and daemon. `cedana daemon start` runs the node daemon; the other
// commands talk to it over its unix socket.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/cedana_forms.h"
#include "cli/cli_context.h"
#include "cli/config_file.h"
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
    cedana::cli::AddCheckCommand(app, ctx);
    // Cedana's forms of the commands become ours (cli/cedana_forms.h).
    cedana::Result<cedana::cli::TranslatedCommand> command =
        cedana::cli::TranslateCedanaForms(std::vector<std::string>(argv, argv + argc));
    if (!command.has_value()) {
      ctx.Fail(command.error());
      return ctx.exit_code();
    }
    if (command->init_config || command->merge_config) {
      const std::string path = cedana::ConfigPath(cedana::ProcessEnvironment());
      auto written = cedana::cli::WriteConfigFile(path, command->init_config
                                                            ? cedana::cli::ConfigWrite::kInit
                                                            : cedana::cli::ConfigWrite::kMerge);
      if (!written.has_value()) {
        ctx.Fail(written.error());
        return ctx.exit_code();
      }
      std::fprintf(stderr, "cedana: wrote %s\n", path.c_str());
      ctx.ReloadConfig();
    }
    // CLI11 takes the arguments in reverse, the last first.
    std::vector<std::string> args(command->argv.rbegin(), command->argv.rend() - 1);
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return ctx.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cedana: internal error: %s\n", e.what());
    return 70;
  }
}
