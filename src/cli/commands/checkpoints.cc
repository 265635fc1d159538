// `cedana checkpoints [--label L] [--dir D]` and `cedana checkpoints delete ID`.
#include <fmt/format.h>

#include "cli/cli_context.h"

namespace cedana::cli {

void AddCheckpointsCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string label, dir, id;
    bool json = false;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* cps = app.add_subcommand("checkpoints", "List checkpoints (newest first), or delete one");
  cps->add_option("--label,-l", o->label, "Only this label");
  cps->add_option("--dir,-d", o->dir, "Checkpoint dir (path or s3://bucket/prefix)");
  cps->add_flag("--json", o->json, "Print JSON");
  auto* del = cps->add_subcommand("delete", "Delete a checkpoint");
  del->add_option("id", o->id, "Checkpoint id")->required();
  del->callback([&ctx, o] {
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kCheckpointsDelete);
    req.checkpoint_id = o->id;
    req.dir = o->dir;
    if (auto r = ctx.Call(req, false)) std::printf("deleted %s\n", r->value("deleted", "").c_str());
  });
  cps->callback([&ctx, o, del] {
    if (del->parsed()) return;
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kCheckpoints);
    req.label = o->label;
    req.dir = o->dir;
    auto r = ctx.Call(req, false);
    if (!r) return;
    if (o->json) {
      std::printf("%s\n", (*r)["checkpoints"].dump(2).c_str());
      return;
    }
    // REASON: why it was taken; FROZEN: how long the job was stopped for it; TOOK: request to
    // commit ("-" for checkpoints made before they recorded these). RUN: "finished" for
    // checkpoints of a run that ended by itself (not resumed by label).
    const char* row = "%-30s %-20s %-10s %-19s %10s %-8s %-11s %7s %7s %-8s %s\n";
    std::printf(row, "ID", "LABEL", "OWNER", "TIME", "SIZE", "CODEC", "REASON", "FROZEN", "TOOK",
                "RUN", "STATE");
    for (const auto& c : (*r)["checkpoints"]) {
      std::string codec = c.value("codec", "") + "x" + std::to_string(c.value("streams", 0));
      std::string reason = c.value("reason", "");
      auto secs = [&](const char* key) {
        return reason.empty() ? std::string("-")
                              : fmt::format("{:.1f}s", c.value(key, int64_t{0}) / 1000.0);
      };
      std::printf(row, c.value("id", "").c_str(), c.value("label", "").c_str(),
                  c.value("owner", "").c_str(),
                  HumanTime(c.value("created_at_ms", int64_t{0})).c_str(),
                  HumanBytes(c.value("stored_bytes", uint64_t{0})).c_str(), codec.c_str(),
                  reason.empty() ? "-" : reason.c_str(), secs("frozen_ms").c_str(),
                  secs("duration_ms").c_str(), c.value("run", "open").c_str(),
                  c.value("state", "").c_str());
    }
  });
}

}  // namespace cedana::cli
