// cedana-slurm: the SLURM side of cedana. In a CEDANA_ENABLE=1 batch step the SPANK plugin
// makes SLURM exec this binary as the job proxy (CEDANA_SLURM_ATTACH=1, the script's path in
// CEDANA_SLURM_ORIG_ARGV0); `cedana-slurm attach -- CMD...` does the same by hand.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/version.h"
#include "slurm_bin/attach.h"

int main(int argc, char** argv) {
  try {
    if (const char* attach = std::getenv("CEDANA_SLURM_ATTACH"); attach && std::string(attach) == "1") {
      std::vector<std::string> args(argv, argv + argc);
      const char* orig = std::getenv("CEDANA_SLURM_ORIG_ARGV0");
      args[0] = orig ? orig : args[0];
      return cedana::slurm_bin::RunAttach(args);
    }
    CLI::App app{"cedana-slurm: SLURM integration of cedana"};
    app.require_subcommand(1);
    std::vector<std::string> cmd;
    auto* attach = app.add_subcommand("attach", "Run a command as this SLURM job's workload");
    attach->add_option("command", cmd, "Command and arguments")->required()->expected(-1);
    int code = 0;
    attach->callback([&] { code = cedana::slurm_bin::RunAttach(cmd); });
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
