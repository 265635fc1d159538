// `cedana daemon start`: the node daemon, in the foreground (systemd runs it as is).
// `cedana daemon check`: commands/check.cc.
// `cedana supervisor`: the per-workload supervisor the daemon starts (internal).
#include "cli/cli_context.h"
#include "daemon/server.h"
#include "daemon/supervisor.h"

namespace cedana::cli {

void AddDaemonCommand(CLI::App& app, CliContext& ctx) {
  auto* daemon = app.add_subcommand("daemon", "Run or query the node daemon");
  daemon->require_subcommand(1);
  auto* start = daemon->add_subcommand("start", "Run the node daemon in the foreground");
  start->callback([&ctx] {
    const Config* config = ctx.config();
    if (config == nullptr) return;
    ctx.ReportConfigWarnings();
    ctx.set_exit_code(cedana::daemon::RunDaemon(*config));
  });
  auto* status = daemon->add_subcommand("status", "Say whether the daemon is running");
  status->callback([&ctx] {
    auto d = ctx.Call(RequestOf(protocol::DaemonOp::kPing), protocol::ParseDaemonInfo, false);
    if (!d) return;
    std::printf(
        "daemon: running (cedana %s)\ncriu: %s %s (no-breakpoint fallback %s)\n"
        "checkpoint dir: %s\n",
        d->version.c_str(), d->criu.c_str(), d->criu_version.c_str(),
        d->no_breakpoints ? "on" : "off", d->checkpoint_dir.c_str());
  });
  AddDaemonCheckCommand(*daemon, ctx);
}

void AddShimCommand(CLI::App& app, CliContext& ctx) {
  auto* supervisor = app.add_subcommand("supervisor", "");  // internal: empty description hides it
  auto* dir = &ctx.Keep<std::string>();
  auto* fd = &ctx.Keep<int>(-1);
  supervisor->add_option("--dir", *dir)->required();
  supervisor->add_option("--report-fd", *fd)->required();
  supervisor->callback(
      [&ctx, dir, fd] { ctx.set_exit_code(cedana::daemon::RunSupervisor(*dir, *fd)); });
}

}  // namespace cedana::cli
