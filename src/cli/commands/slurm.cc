// `cedana slurm setup [--node-role ROLE] [--no-restart] [--source DIR]...` and
// `cedana slurm destroy [--no-restart]`: install what this node's role needs of the SLURM
// plugins, cedana-slurm and the systemd units, and configure SLURM to load them, or undo exactly
// that (src/slurm/slurm_install.h, node_role.h). Run as root on every SLURM node.
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <filesystem>

#include "cli/cli_context.h"
#include "cli/plugin_store.h"
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
  build.push_back(cwd + "/src/cedana_slurm");
  build.push_back(cwd + "/packaging");
  for (const auto& dir : build)
    if (fs::Exists(dir + "/" + slurm::kSpankSo) || fs::Exists(dir + "/" + slurm::kJobSubmitSo))
      return build;
  // The systemd units: where cmake --install put them beside this binary.
  return {"/usr/local/lib", "/usr/local/bin", BesideThisBinary("share/cedana/systemd")};
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

// This node's SLURM version, which every plugin file setup installs must have been built for;
// "" (nothing to compare with) when scontrol is missing or cannot answer.
std::string RunningSlurmVersion() {
  Result<std::string> installed = slurm::InstalledSlurmVersion();
  return installed.has_value() ? *installed : "";
}

}  // namespace

void AddSlurmCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    bool restart = true;
    std::vector<std::string> sources;
    std::string role = "all";
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
                    "directory, else /usr/local/lib, /usr/local/bin and the installed units)");
  setup
      ->add_option("--node-role", o->role,
                   std::string("What this node is in the cluster: ") + slurm::kNodeRoleNames +
                       " (worker: slurmd's plugins and the node daemon's unit; controller: "
                       "slurmctld's plugins, cedana-slurm and its unit; login: the commands' "
                       "plugins)")
      ->envname("CEDANA_SLURM_NODE_ROLE")
      ->capture_default_str();
  setup->callback([&ctx, o] {
    Result<slurm::NodeRole> role = slurm::ParseNodeRole(o->role);
    if (!role.has_value()) return ctx.Fail(role.error().WithContext("--node-role"));
    slurm::SlurmInstallPaths paths = slurm::DefaultSlurmInstallPaths();
    if (Status s = CheckCanChange(paths); !s.ok()) return ctx.Fail(s);
    slurm::SetupOptions options;
    options.role = *role;
    options.source_dirs = o->sources.empty() ? DefaultSourceDirs() : o->sources;
    options.restart = o->restart;
    options.slurm_version = RunningSlurmVersion();
    const Config* config = ctx.config();
    if (config == nullptr) return;
    if (config->node.slurm_unprivileged) {
      // The seeds' setcap for unprivileged mode: criu (run as the job's user), cedana and,
      // added by setup once installed, cedana-slurm.
      auto criu = engine::FindCriuBinary(config->node.criu_binary);
      if (!criu.has_value()) return ctx.Fail(criu.error());
      std::error_code ec;
      options.capability_binaries = {std::filesystem::canonical(*criu, ec).string(),
                                     std::filesystem::canonical("/proc/self/exe", ec).string()};
      if (ec) return ctx.Fail(ErrnoStatus(ec.value(), "resolving the criu and cedana binaries"));
    }
    auto report = slurm::SetupSlurm(paths, options);
    if (!report.has_value()) {
      if (report.error().code() == Code::kFailedPrecondition)
        return ctx.Fail(FailedPreconditionError(
            report.error().message() +
            ": install the build for this SLURM first (`cedana plugin install slurm slurm/wlm` "
            "picks it; `cedana plugin list` shows the builds there are)"));
      return ctx.Fail(report.error());
    }
    Print(*report);
    std::printf("SLURM support is set up for the role %s (undo with: cedana slurm destroy)\n",
                std::string(slurm::NodeRoleName(*role)).c_str());
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
