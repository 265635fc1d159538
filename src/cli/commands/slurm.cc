// `cedana slurm setup [--no-restart] [--source DIR]...` and `cedana slurm destroy [--no-restart]`:
// install the SLURM plugins and cedana-slurm on this node and configure SLURM to load them, or
// undo exactly that (src/slurm/slurm_install.h). Run as root on every SLURM node.
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <filesystem>

#include "cli/cli_context.h"
#include "common/fs.h"
#include "engine/criu_client.h"
#include "slurm/running_slurm.h"
#include "slurm/slurm_install.h"

namespace cedana::cli {
namespace {

// Where setup takes the files from: a build tree when run inside one (the docs say
// `cd build && sudo cedana slurm setup`), else what `cedana plugin install` put in place.
std::vector<std::string> DefaultSourceDirs() {
  namespace sfs = std::filesystem;
  std::error_code ec;
  std::string cwd = sfs::current_path(ec).string();
  std::vector<std::string> build = {cwd};
  for (const auto& e : sfs::directory_iterator(cwd + "/plugins", ec))
    if (e.is_directory(ec)) build.push_back(e.path().string());
  std::sort(build.begin() + 1, build.end());
  build.push_back(cwd + "/src/slurm_bin");
  for (const auto& dir : build)
    if (fs::Exists(dir + "/" + slurm::kSpankSo)) return build;
  return {"/usr/local/lib", "/usr/local/bin"};
}

void Print(const slurm::InstallReport& report) {
  for (const auto& a : report.actions) std::printf("%s\n", a.c_str());
  for (const auto& w : report.warnings) std::fprintf(stderr, "cedana: warning: %s\n", w.c_str());
}

// SLURM must be here, and the changes need root; say so before touching anything.
Status CheckCanChange(const slurm::SlurmInstallPaths& paths) {
  CEDANA_RETURN_IF_ERROR(slurm::LocateSlurm(paths).error());
  if (::geteuid() != 0)
    return PermissionDeniedError("changing SLURM's configuration needs root: run with sudo");
  return OkStatus();
}

// SLURM loads job_submit, cli_filter and task plugins only into the exact version
// (major.minor.micro) they were built for: refuse a mismatch before changing anything.
Status CheckSlurmVersion() {
#ifdef CEDANA_BUILT_FOR_SLURM
  Result<std::string> installed = slurm::InstalledSlurmVersion();
  if (!installed.has_value()) return OkStatus();  // no working scontrol: nothing to compare with
  const std::string& running = *installed;
  if (running != CEDANA_BUILT_FOR_SLURM)
    return FailedPreconditionError(
        "these plugins were built for SLURM " CEDANA_BUILT_FOR_SLURM " but this node runs SLURM " +
        running +
        "; SLURM loads them only into the exact version they were built for: rebuild "
        "cedana on a machine with this SLURM's libslurm-dev (scripts/setup.sh)");
#endif
  return OkStatus();
}

}  // namespace

void AddSlurmCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    bool restart = true;
    std::vector<std::string> sources;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* slurm = app.add_subcommand("slurm", "Set up or remove SLURM support on this node");
  slurm->require_subcommand(1);

  auto* setup = slurm->add_subcommand(
      "setup",
      "Install the SLURM plugins and cedana-slurm, edit slurm.conf and plugstack.conf, "
      "restart slurmctld/slurmd");
  setup->add_flag("--restart,!--no-restart", o->restart,
                  "Restart slurmctld/slurmd afterwards (default: yes)");
  setup->add_option("--source", o->sources,
                    "Directory with the built files (default: the build tree in the current "
                    "directory, else /usr/local/lib and /usr/local/bin)");
  setup->callback([&ctx, o] {
    slurm::SlurmInstallPaths paths = slurm::DefaultSlurmInstallPaths();
    if (Status s = CheckCanChange(paths); !s.ok()) return ctx.Fail(s);
    if (Status s = CheckSlurmVersion(); !s.ok()) return ctx.Fail(s);
    slurm::SetupOptions options;
    options.source_dirs = o->sources.empty() ? DefaultSourceDirs() : o->sources;
    options.restart = o->restart;
    const Config* config = ctx.config();
    if (config == nullptr) return;
    if (config->slurm_unprivileged) {
      // The seeds' setcap for unprivileged mode: criu (run as the job's user), cedana and,
      // added by setup once installed, cedana-slurm.
      auto criu = engine::FindCriuBinary(config->criu_binary);
      if (!criu.has_value()) return ctx.Fail(criu.error());
      std::error_code ec;
      options.capability_binaries = {std::filesystem::canonical(*criu, ec).string(),
                                     std::filesystem::canonical("/proc/self/exe", ec).string()};
      if (ec) return ctx.Fail(ErrnoStatus(ec.value(), "resolving the criu and cedana binaries"));
    }
    auto report = slurm::SetupSlurm(paths, options);
    if (!report.has_value()) return ctx.Fail(report.error());
    Print(*report);
    std::printf("SLURM support is set up (undo with: cedana slurm destroy)\n");
  });

  auto* destroy = slurm->add_subcommand(
      "destroy",
      "Undo `cedana slurm setup`: restore slurm.conf and plugstack.conf, remove the "
      "installed files, restart slurmctld/slurmd");
  destroy->add_flag("--restart,!--no-restart", o->restart,
                    "Restart slurmctld/slurmd afterwards (default: yes)");
  destroy->callback([&ctx, o] {
    slurm::SlurmInstallPaths paths = slurm::DefaultSlurmInstallPaths();
    if (Status s = CheckCanChange(paths); !s.ok()) return ctx.Fail(s);
    auto report = slurm::DestroySlurm(paths, o->restart);
    if (!report.has_value()) return ctx.Fail(report.error());
    Print(*report);
    std::printf("SLURM support is removed\n");
  });
}

}  // namespace cedana::cli
