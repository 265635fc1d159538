// `cedana ps`: the managed workloads of this node; `cedana kill ID [--wait]`: signal one and,
// with --wait, return once it has ended.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "cli/cli_context.h"

namespace cedana::cli {

void AddPsCommand(CLI::App& app, CliContext& ctx) {
  auto* ps = app.add_subcommand("ps", "List managed workloads");
  auto* json = &ctx.Keep<bool>(false);
  auto* one = &ctx.Keep<std::string>();
  ps->add_flag("--json", *json, "Print JSON");
  ps->add_option("id", *one, "Only this workload");
  ps->callback([&ctx, json, one] {
    if (!one->empty()) {
      auto w = ctx.Call(RequestOf(protocol::DaemonOp::kInspect, *one), protocol::ParseInspectReply,
                        false);
      if (!w) return;
      if (*json) {
        std::printf("%s\n", protocol::EncodeReply(*w)["workload"].dump(2).c_str());
        return;
      }
      std::printf("%s %s %s pid %d\n", w->id.c_str(), w->label.c_str(), w->status.c_str(), w->pid);
      return;
    }
    auto list = ctx.Call(RequestOf(protocol::DaemonOp::kPs), protocol::ParseWorkloadList, false);
    if (!list) return;
    if (*json) {
      std::printf("%s\n", protocol::EncodeReply(*list)["workloads"].dump(2).c_str());
      return;
    }
    std::printf("%-12s %-20s %-13s %8s %-10s %-19s %s\n", "ID", "LABEL", "STATUS", "PID", "USER",
                "STARTED", "COMMAND");
    for (const protocol::WorkloadInfo& w : list->workloads) {
      std::string cmd;
      for (const std::string& a : w.argv) cmd += (cmd.empty() ? "" : " ") + a;
      if (cmd.empty() && !w.restored_from.empty()) cmd = "(restored)";
      std::string status = w.status;
      if (status == "exited") status += fmt::format(" ({})", w.exit_code);
      std::printf("%-12s %-20s %-13s %8d %-10s %-19s %s\n", w.id.c_str(), w.label.c_str(),
                  status.c_str(), w.pid, w.user.c_str(), HumanTime(w.started_at_ms).c_str(),
                  cmd.substr(0, 60).c_str());
    }
  });
}

namespace {

// Polls the workload's record until the supervisor has reaped it (status no longer starting or
// running), at most `timeout_s` seconds. The status it ended in, or the error.
Result<std::string> WaitUntilEnded(CliContext& ctx, const std::string& id, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    auto w = ctx.Ask(RequestOf(protocol::DaemonOp::kInspect, id), protocol::ParseInspectReply);
    if (!w.has_value()) return w.error();
    const std::string status = w->status;
    if (status != "running" && status != "starting") return status;
    if (std::chrono::steady_clock::now() >= deadline)
      return DeadlineExceededError(fmt::format(
          "workload {} is still {} {} s after the signal (raise --timeout, or send SIGKILL: "
          "cedana kill {})",
          id, status, timeout_s, id));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

void AddKillCommand(CLI::App& app, CliContext& ctx) {
  auto* id = &ctx.Keep<std::string>();
  auto* sig = &ctx.Keep<int>(9);
  auto* wait = &ctx.Keep<bool>(false);
  auto* timeout = &ctx.Keep<int>(30);
  auto* kill = app.add_subcommand("kill", "Send a signal (default SIGKILL) to a workload");
  kill->add_option("id", *id, "Workload id")->required();
  kill->add_option("--signal,-s", *sig, "Signal number");
  kill->add_flag("--wait", *wait,
                 "Return once the workload has ended, not when the signal is sent");
  kill->add_option("--timeout", *timeout,
                   "With --wait: seconds to wait before giving up (default 30)")
      ->check(CLI::Range(1, 86400));
  kill->callback([&ctx, id, sig, wait, timeout] {
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kKill, *id);
    req.signal_number = *sig;
    auto sent = ctx.Call(req, protocol::ParseSignalled, false);
    if (!sent) return;
    if (!*wait) {
      std::printf("sent signal %d to %s\n", sent->signal, sent->id.c_str());
      return;
    }
    Result<std::string> ended = WaitUntilEnded(ctx, *id, *timeout);
    if (!ended.has_value()) return ctx.Fail(ended.error());
    std::printf("sent signal %d to %s; it is %s\n", *sig, id->c_str(), ended->c_str());
  });
}

}  // namespace cedana::cli
