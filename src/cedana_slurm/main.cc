// cedana-slurm: the SLURM side of cedana. In a CEDANA_ENABLE=1 batch step the SPANK plugin
// makes SLURM exec this binary as the job proxy (CEDANA_SLURM_ATTACH=1, the script's path in
// CEDANA_SLURM_ORIG_ARGV0); `cedana-slurm attach -- CMD...` does the same by hand. Named `srun`
// (a link in libexec/cedana, first in an enabled batch script's PATH) it is the srun relay, and
// in a task of a step the relay started (CEDANA_SLURM_STEP_TASK=1) it is that task's proxy.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/capabilities.h"
#include "common/config.h"
#include "common/version.h"
#include "controller/controller.h"
#include "controller/controller_commands.h"
#include "job_proxy/attach.h"
#include "job_proxy/steps.h"

int main(int argc, char** argv) {
  // See cedana's main: the seeds' file capabilities are not used by cedana-slurm either.
  cedana::DropProcessCapabilities();
  try {
    // The srun relay first in an enabled batch script's PATH (job_proxy/steps.h).
    if (argc > 0 && std::filesystem::path(argv[0]).filename() == "srun")
      cedana::job_proxy::RunSrunRelay(std::vector<std::string>(argv, argv + argc));
    // What spank/cedana made of a task: its mode in a variable, its own argv[0] in another.
    auto set = [](const char* var) {
      const char* v = std::getenv(var);
      return v != nullptr && std::string(v) == "1";
    };
    auto task_argv = [&] {
      std::vector<std::string> args(argv, argv + argc);
      if (const char* orig = std::getenv("CEDANA_SLURM_ORIG_ARGV0")) args[0] = orig;
      return args;
    };
    if (set("CEDANA_SLURM_STEP_TASK")) return cedana::job_proxy::RunStepTask(task_argv());
    if (set("CEDANA_SLURM_ATTACH")) return cedana::job_proxy::RunAttach(task_argv());
    CLI::App app{"cedana-slurm: SLURM integration of cedana"};
    app.require_subcommand(1);
    std::vector<std::string> cmd;
    auto* attach = app.add_subcommand("attach", "Run a command as this SLURM job's workload");
    attach->add_option("command", cmd, "Command and arguments")->required()->expected(-1);
    int code = 0;
    attach->callback([&] { code = cedana::job_proxy::RunAttach(cmd); });
    auto* daemon = app.add_subcommand(
        "daemon", "The controller: catalog, policies, REST API, web UI, installer");
    std::string action = "start";
    daemon->add_option("action", action, "start (foreground, the default), status or stop")
        ->check(CLI::IsMember({"start", "status", "stop"}));
    daemon->callback([&] { code = cedana::controller::ControllerCommand(action); });
    auto* token = app.add_subcommand("token", "API tokens of the controller");
    auto* create = token->add_subcommand("create", "Create a token (printed once, stored hashed)");
    std::string user;
    bool admin = false;
    create->add_option("--user", user, "The user the token acts as")->required();
    create->add_flag("--admin", admin, "The token sees and changes everything");
    create->callback([&] { code = cedana::controller::CreateToken(user, admin); });
    token->require_subcommand(1);
    app.add_subcommand("version", "Print the version")->callback([] {
      std::printf("cedana-slurm %s\n", cedana::kVersion);
    });
    CLI11_PARSE(app, argc, argv);
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cedana-slurm: internal error: %s\n", e.what());
    return 70;
  }
}
