// `cedana ps`: the managed workloads of this node; `cedana kill ID`: signal one.
#include <fmt/format.h>

#include "cli/cli_context.h"

namespace cedana::cli {

void AddPsCommand(CLI::App& app, CliContext& ctx) {
  auto* ps = app.add_subcommand("ps", "List managed workloads");
  auto* json = new bool(false);
  ps->add_flag("--json", *json, "Print JSON");
  ps->callback([&ctx, json] {
    auto r = ctx.Call({{"op", "ps"}}, false);
    if (!r) return;
    if (*json) {
      std::printf("%s\n", (*r)["workloads"].dump(2).c_str());
      return;
    }
    std::printf("%-12s %-20s %-13s %8s %-10s %-19s %s\n", "ID", "LABEL", "STATUS", "PID", "USER",
                "STARTED", "COMMAND");
    for (const auto& w : (*r)["workloads"]) {
      std::string cmd;
      for (const auto& a : w.value("argv", std::vector<std::string>{})) cmd += (cmd.empty() ? "" : " ") + a;
      if (cmd.empty() && !w.value("restored_from", "").empty()) cmd = "(restored)";
      std::string status = w.value("status", "");
      if (status == "exited") status += fmt::format(" ({})", w.value("exit_code", -1));
      std::printf("%-12s %-20s %-13s %8d %-10s %-19s %s\n", w.value("id", "").c_str(),
                  w.value("label", "").c_str(), status.c_str(), w.value("pid", 0),
                  w.value("user", "").c_str(), HumanTime(w.value("started_at_ms", int64_t{0})).c_str(),
                  cmd.substr(0, 60).c_str());
    }
  });
}

void AddKillCommand(CLI::App& app, CliContext& ctx) {
  auto* id = new std::string;
  auto* sig = new int(9);
  auto* kill = app.add_subcommand("kill", "Send a signal (default SIGKILL) to a workload");
  kill->add_option("id", *id, "Workload id")->required();
  kill->add_option("--signal,-s", *sig, "Signal number");
  kill->callback([&ctx, id, sig] {
    if (ctx.Call({{"op", "kill"}, {"id", *id}, {"signal", *sig}}, false))
      std::printf("sent signal %d to %s\n", *sig, id->c_str());
  });
}

}  // namespace cedana::cli
