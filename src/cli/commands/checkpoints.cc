// `cedana checkpoints [--label L] [--dir D]` and `cedana checkpoints delete ID`.
#include "cli/cli_context.h"

namespace cedana::cli {

void AddCheckpointsCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string label, dir, id;
    bool json = false;
  };
  auto* o = new Opts;
  auto* cps = app.add_subcommand("checkpoints", "List checkpoints (newest first), or delete one");
  cps->add_option("--label,-l", o->label, "Only this label");
  cps->add_option("--dir,-d", o->dir, "Checkpoint dir (path or s3://bucket/prefix)");
  cps->add_flag("--json", o->json, "Print JSON");
  auto* del = cps->add_subcommand("delete", "Delete a checkpoint");
  del->add_option("id", o->id, "Checkpoint id")->required();
  del->callback([&ctx, o] {
    protocol::Message req = {{"op", "checkpoints_delete"}, {"checkpoint_id", o->id}};
    if (!o->dir.empty()) req["dir"] = o->dir;
    if (auto r = ctx.Call(req, false)) std::printf("deleted %s\n", r->value("deleted", "").c_str());
  });
  cps->callback([&ctx, o, del] {
    if (del->parsed()) return;
    protocol::Message req = {{"op", "checkpoints"}};
    if (!o->label.empty()) req["label"] = o->label;
    if (!o->dir.empty()) req["dir"] = o->dir;
    auto r = ctx.Call(req, false);
    if (!r) return;
    if (o->json) {
      std::printf("%s\n", (*r)["checkpoints"].dump(2).c_str());
      return;
    }
    // RUN: "finished" for checkpoints of a run that ended by itself (not resumed by label).
    std::printf("%-30s %-20s %-10s %-19s %10s %-8s %-8s %s\n", "ID", "LABEL", "OWNER", "TIME", "SIZE",
                "CODEC", "RUN", "STATE");
    for (const auto& c : (*r)["checkpoints"]) {
      std::string codec = c.value("codec", "") + "x" + std::to_string(c.value("streams", 0));
      std::printf("%-30s %-20s %-10s %-19s %10s %-8s %-8s %s\n", c.value("id", "").c_str(),
                  c.value("label", "").c_str(), c.value("owner", "").c_str(),
                  HumanTime(c.value("created_at_ms", int64_t{0})).c_str(),
                  HumanBytes(c.value("stored_bytes", uint64_t{0})).c_str(), codec.c_str(),
                  c.value("run", "open").c_str(), c.value("state", "").c_str());
    }
  });
}

}  // namespace cedana::cli
