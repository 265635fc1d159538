// `cedana restore CHECKPOINT-ID | --label L [--attach] [--dir D] [--output FILE]`
#include <filesystem>

#include "cli/cli_context.h"

namespace cedana::cli {

void AddRestoreCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string id, label, dir, output;
    bool attach = false;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* restore = app.add_subcommand("restore", "Restore a checkpoint as a new managed workload");
  restore->add_option("checkpoint", o->id, "Checkpoint id (see `cedana checkpoints`)");
  restore->add_option("--label,-l", o->label, "Restore the newest good checkpoint of this label");
  restore->add_option("--dir,-d", o->dir, "Checkpoint dir (path or s3://bucket/prefix)");
  restore->add_option("--output,-o", o->output,
                      "File for stdout/stderr (default: the dumped workload's, appended)");
  restore->add_flag("--attach,-a", o->attach,
                    "Stream the output and exit with the workload's status");
  restore->callback([&ctx, o] {
    if (o->id.empty() == o->label.empty()) {
      ctx.Fail(InvalidArgumentError("give a checkpoint id or --label L (one of them)"));
      return;
    }
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kRestore);
    req.checkpoint_id = o->id;
    req.label = o->label;
    req.dir = o->dir;
    if (!o->output.empty()) req.stdout_path = std::filesystem::absolute(o->output).string();
    off_t start = o->output.empty() ? -1 : FileSize(req.stdout_path);
    auto w = ctx.Call(req, protocol::ParseStartedWorkload);
    if (!w) return;
    for (const std::string& s : w->skipped)
      std::fprintf(stderr, "skipped checkpoint %s\n", s.c_str());
    std::printf("%s\n", w->id.c_str());
    std::fprintf(stderr, "restored checkpoint %s as workload %s (pid %d), output in %s\n",
                 w->checkpoint_id.c_str(), w->id.c_str(), w->pid, w->stdout_path.c_str());
    // A restore appends to the dumped workload's output file by default: follow from its
    // size now, not from the start.
    if (o->attach)
      ctx.set_exit_code(FollowWorkload(ctx, w->id, w->stdout_path,
                                       start >= 0 ? start : FileSize(w->stdout_path)));
  });
}

}  // namespace cedana::cli
