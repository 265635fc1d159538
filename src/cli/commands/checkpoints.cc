// `cedana checkpoints [--label L] [--dir D] [--id ID] [--json]` and `cedana checkpoints delete ID`.
#include <fmt/format.h>

#include "cli/cli_context.h"

namespace cedana::cli {

void AddCheckpointsCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string label, dir, id, only;
    bool json = false;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* cps = app.add_subcommand("checkpoints", "List checkpoints (newest first), or delete one");
  cps->add_option("--label,-l", o->label, "Only this label");
  cps->add_option("--dir,-d", o->dir, "Checkpoint dir (path or s3://bucket/prefix)");
  cps->add_flag("--json", o->json, "Print JSON");
  cps->add_option("--id", o->only, "Only this checkpoint (with --json: its object alone)");
  auto* del = cps->add_subcommand("delete", "Delete a checkpoint");
  del->add_option("id", o->id, "Checkpoint id")->required();
  del->callback([&ctx, o] {
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kCheckpointsDelete);
    req.checkpoint_id = o->id;
    req.dir = o->dir;
    if (auto d = ctx.Call(req, protocol::ParseDeleted, false))
      std::printf("deleted %s\n", d->checkpoint_id.c_str());
  });
  cps->callback([&ctx, o, del] {
    if (del->parsed()) return;
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kCheckpoints);
    req.label = o->label;
    req.dir = o->dir;
    auto list = ctx.Call(req, protocol::ParseCheckpointList, false);
    if (!list) return;
    if (!o->only.empty()) {
      std::erase_if(list->checkpoints,
                    [&](const protocol::CheckpointSummary& c) { return c.id != o->only; });
      if (list->checkpoints.empty())
        return ctx.Fail(NotFoundError("no checkpoint " + o->only + " in " + list->dir));
      if (o->json) {
        std::printf("%s\n", protocol::EncodeReply(*list)["checkpoints"][0].dump(2).c_str());
        return;
      }
    }
    if (o->json) {
      std::printf("%s\n", protocol::EncodeReply(*list)["checkpoints"].dump(2).c_str());
      return;
    }
    // REASON: why it was taken; FROZEN: how long the job was stopped for it; TOOK: request to
    // commit ("-" for checkpoints made before they recorded these). RUN: "finished" for
    // checkpoints of a run that ended by itself (not resumed by label).
    const char* row = "%-30s %-20s %-10s %-19s %10s %-8s %-11s %7s %7s %-8s %s\n";
    std::printf(row, "ID", "LABEL", "OWNER", "TIME", "SIZE", "CODEC", "REASON", "FROZEN", "TOOK",
                "RUN", "STATE");
    for (const protocol::CheckpointSummary& c : list->checkpoints) {
      std::string codec = c.codec + "x" + std::to_string(c.streams);
      auto secs = [&](int64_t ms) {
        return c.reason.empty() ? std::string("-") : fmt::format("{:.1f}s", ms / 1000.0);
      };
      std::printf(row, c.id.c_str(), c.label.c_str(), c.owner.c_str(),
                  HumanTime(c.created_at_ms).c_str(), HumanBytes(c.stored_bytes).c_str(),
                  codec.c_str(), c.reason.empty() ? "-" : c.reason.c_str(),
                  secs(c.frozen_ms).c_str(), secs(c.duration_ms).c_str(),
                  c.run.empty() ? "open" : c.run.c_str(), c.state.c_str());
    }
  });
}

}  // namespace cedana::cli
