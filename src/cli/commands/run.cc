// `cedana run [--label L] [--attach] [--output FILE] -- CMD ARGS...`
#include <unistd.h>

#include <filesystem>

#include "cli/cli_context.h"
#include "common/config.h"

namespace cedana::cli {

void AddRunCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string label, output;
    bool attach = false;
    std::vector<std::string> cmd;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* run = app.add_subcommand(
      "run",
      "Start a command as a managed workload (own PID namespace; the node's in unprivileged mode)");
  run->add_option("--label,-l", o->label, "Label of the workload's checkpoints (default: its id)");
  run->add_option("--output,-o", o->output, "File that receives stdout and stderr (appended)");
  run->add_flag("--attach,-a", o->attach, "Stream the output and exit with the workload's status");
  run->add_option("command", o->cmd, "Command and arguments (after --)")->required()->expected(-1);
  run->callback([&ctx, o] {
    std::vector<std::string> env;
    for (const auto& [k, v] : ProcessEnvironment()) env.push_back(k + "=" + v);
    std::string output = o->output;
    if (!output.empty()) output = std::filesystem::absolute(output).string();
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kRun);
    req.argv = o->cmd;
    req.env = env;
    req.cwd = std::filesystem::current_path().string();
    req.stdout_path = output;
    req.label = o->label;
    // The output file may exist already (--output of an earlier run): --attach shows only what
    // this run appends.
    off_t start = output.empty() ? 0 : FileSize(output);
    auto w = ctx.Call(req, protocol::ParseStartedWorkload);
    if (!w) return;
    if (!o->attach) {
      std::printf("%s\n", w->id.c_str());
      std::fprintf(stderr, "workload %s running as pid %d (label %s), output in %s\n",
                   w->id.c_str(), w->pid, w->label.c_str(), w->stdout_path.c_str());
      return;
    }
    ctx.set_exit_code(FollowWorkload(ctx, w->id, w->stdout_path, start));
  });
}

}  // namespace cedana::cli
