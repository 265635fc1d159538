// `cedana check` (= `cedana daemon check --full`): whether a checkpoint and a restore can work on
// this node, each thing they depend on with its fix (src/check). `cedana daemon check` looks only
// at what the node daemon itself needs. Exits 0 only when no check failed.
#include <cstdio>

#include "check/node_checks.h"
#include "cli/cli_context.h"
#include "cli/plugin_store.h"

namespace cedana::cli {
namespace {

struct CheckFlags {
  bool full = false;
  bool json = false;
  int probe_mib = 64;
};

void AddFlags(CLI::App* command, CheckFlags* flags) {
  command->add_flag("--json", flags->json, "Print the findings as JSON");
  command
      ->add_option("--probe-mib", flags->probe_mib,
                   "MiB written to the checkpoint dir to measure its throughput (default 64)")
      ->check(CLI::Range(1, 4096));
}

void Run(CliContext& ctx, const CheckFlags& flags) {
  const Config* config = ctx.config();
  if (config == nullptr) return;
  check::CheckOptions options;
  options.full = flags.full;
  options.probe_bytes = static_cast<uint64_t>(flags.probe_mib) << 20;
  options.plugin_store = PluginStore();
  check::CheckReport report = check::CheckNode(*config, options);
  if (flags.json) std::printf("%s\n", check::ToJson(report).dump(2).c_str());
  else std::fputs(check::RenderText(report).c_str(), stdout);
  ctx.set_exit_code(report.CanCheckpoint() ? 0 : 1);
}

}  // namespace

void AddCheckCommand(CLI::App& app, CliContext& ctx) {
  auto* flags = &ctx.Keep<CheckFlags>();
  flags->full = true;
  auto* check = app.add_subcommand(
      "check", "Say whether checkpoint and restore can work on this node, and what to fix");
  AddFlags(check, flags);
  check->callback([&ctx, flags] { Run(ctx, *flags); });
}

void AddDaemonCheckCommand(CLI::App& daemon, CliContext& ctx) {
  auto* flags = &ctx.Keep<CheckFlags>();
  auto* check = daemon.add_subcommand(
      "check", "Check what the node daemon needs (CRIU, breakpoints, the checkpoint dir)");
  check->add_flag(
      "--full", flags->full,
      "Also SLURM, the controller and the checkpoint dir's throughput (= cedana check)");
  AddFlags(check, flags);
  check->callback([&ctx, flags] { Run(ctx, *flags); });
}

}  // namespace cedana::cli
