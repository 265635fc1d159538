#include "check/node_checks.h"

#include <linux/magic.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/subprocess.h"
#include "common/system_names.h"
#include "common/version.h"
#include "engine/breakpoint_probe.h"
#include "engine/criu_client.h"
#include "protocol/client.h"
#include "protocol/controller_client.h"
#include "protocol/daemon_reply.h"
#include "slurm/plugin_builds.h"
#include "slurm/plugin_file_version.h"
#include "slurm/running_slurm.h"
#include "slurm/slurm_install.h"
#include "storage/checkpoint_id.h"
#include "storage/checkpoint_store.h"

namespace cedana::check {
namespace {

constexpr const char* kAsRoot = "run `sudo cedana check` to check it";

Finding Ok(std::string name, std::string detail) {
  return {std::move(name), Verdict::kOk, std::move(detail), ""};
}
Finding Warn(std::string name, std::string detail, std::string fix) {
  return {std::move(name), Verdict::kWarn, std::move(detail), std::move(fix)};
}
Finding Fail(std::string name, std::string detail, std::string fix) {
  return {std::move(name), Verdict::kFail, std::move(detail), std::move(fix)};
}
Finding Skip(std::string name, std::string detail, std::string fix = "") {
  return {std::move(name), Verdict::kSkipped, std::move(detail), std::move(fix)};
}

bool IsRoot() { return ::geteuid() == 0; }

// Runs a command; its exit and its words (stdout and stderr), or why it could not run.
struct Ran {
  bool started = false;
  bool ok = false;
  std::string output;
};
Ran RunQuiet(std::vector<std::string> argv) {
  subprocess::Command command;
  command.argv = std::move(argv);
  Ran ran;
  Result<subprocess::Exit> exit =
      subprocess::Run(command, subprocess::Output::kStdoutAndStderr, &ran.output);
  ran.started = exit.has_value();
  ran.ok = exit.has_value() && exit->ok();
  if (!exit.has_value()) ran.output = exit.error().message();
  while (!ran.output.empty() && ran.output.back() == '\n') ran.output.pop_back();
  return ran;
}

// The last line of a command's words: CRIU says the verdict last.
std::string LastLine(const std::string& text) {
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

Finding CheckDaemon(const Config& config) {
  auto info =
      protocol::CallDaemon(config.socket_path, protocol::RequestOf(protocol::DaemonOp::kPing),
                           protocol::ParseDaemonInfo);
  if (!info.has_value())
    return Fail("node daemon", info.error().message(),
                "start it: `systemctl start cedana` (or `cedana daemon start` in a terminal)");
  std::string detail = fmt::format("running on {}: cedana {}, CRIU {}", config.socket_path,
                                   info->version, info->criu_version);
  if (info->version != kVersion)
    return Warn("node daemon", detail + fmt::format(", but this command is cedana {}", kVersion),
                "restart it after an upgrade: `systemctl restart cedana`");
  return Ok("node daemon", detail);
}

// The criu binary and its version; *binary is left "" when there is no usable one.
Finding CheckCriuBinary(const Config& config, std::string* binary) {
  engine::CriuSettings settings;
  settings.binary = config.node.criu_binary;
  auto client = engine::CriuClient::Create(settings);
  if (!client.has_value())
    return Fail("criu", client.error().message(),
                "install CRIU 4.x (scripts/setup.sh builds it) or set criu.binary "
                "(CEDANA_CRIU_BINARY) to its path");
  *binary = client->settings().binary;
  auto version = client->Version();
  return Ok("criu", fmt::format("{} at {}", version.has_value() ? *version : "?", *binary));
}

Finding CheckCriuKernel(const std::string& binary) {
  if (binary.empty()) return Skip("criu check", "no usable criu");
  if (!IsRoot()) return Skip("criu check", "CRIU's own check needs root", kAsRoot);
  Ran ran = RunQuiet({binary, "check"});
  if (ran.ok) return Ok("criu check", LastLine(ran.output));
  return Fail("criu check", ran.output.empty() ? "criu check failed" : LastLine(ran.output),
              "`criu check --all` names what the kernel lacks; CRIU needs a kernel with "
              "CONFIG_CHECKPOINT_RESTORE and its namespaces");
}

// `criu check --feature NAME`: 1 supported, 0 not, -1 could not ask.
int CriuFeature(const std::string& binary, const char* feature) {
  if (binary.empty() || !IsRoot()) return -1;
  Ran ran = RunQuiet({binary, "check", "--feature", feature});
  return !ran.started ? -1 : ran.ok ? 1 : 0;
}

Finding CheckBreakpoints(const Config& config) {
  const BreakpointFallback mode = config.node.criu_no_breakpoints;
  auto works = engine::HardwareBreakpointsWork();
  if (!works.has_value())
    return Fail("breakpoints", "could not probe: " + works.error().message(),
                "cedana needs ptrace for its probe and CRIU for every dump: check "
                "kernel.yama.ptrace_scope and seccomp settings");
  if (*works)
    return Ok("breakpoints", mode == BreakpointFallback::kOn
                                 ? "hardware breakpoints work; the no-breakpoint fallback "
                                   "is forced on (criu.no_breakpoints=on)"
                                 : "hardware breakpoints work");
  if (mode == BreakpointFallback::kOff)
    return Fail("breakpoints",
                "hardware breakpoints do not work here and criu.no_breakpoints=off: CRIU would "
                "hang with the job frozen",
                "set criu.no_breakpoints to auto (CEDANA_CRIU_NO_BREAKPOINTS=auto)");
  return Ok("breakpoints",
            "hardware breakpoints do not work here; CRIU runs with its no-breakpoint fallback");
}

Finding CheckSoftDirty(const std::string& binary) {
  switch (CriuFeature(binary, "mem_dirty_track")) {
    case 1: return Ok("soft-dirty", "memory change tracking is on");
    case 0:
      return Ok("soft-dirty",
                "off in this kernel: CRIU's incremental pre-dumps are unavailable; cedana's "
                "checkpoints do not need them");
    default: return Skip("soft-dirty", "needs root and a usable criu", kAsRoot);
  }
}

Finding CheckNetworkLock(const Config& config, const std::string& binary) {
  int nftables = CriuFeature(binary, "network_lock_nftables");
  if (nftables < 0) return Skip("network lock", "needs root and a usable criu", kAsRoot);
  Ran nft = RunQuiet({"nft", "--version"});
  if (nftables == 1 && nft.ok) return Ok("network lock", "nftables (" + nft.output + ")");
  std::string lacking = nftables == 1 ? "the nft command is missing"
                                      : "CRIU cannot lock connections with nftables here";
  return Warn("network lock",
              lacking + ": jobs with TCP connections cannot be checkpointed (checkpoint.tcp=" +
                  std::string(NameOf(kOutsideTcpNames, config.node.checkpoint_tcp)) + ")",
              "install nftables (apt install nftables) on a kernel with nf_tables");
}

Finding CheckCapabilities(const Config& config, const std::string& binary) {
  if (!config.node.slurm_unprivileged)
    return Ok("capabilities", "not needed: slurm.unprivileged is off (CRIU runs as root)");
  if (binary.empty()) return Skip("capabilities", "no usable criu");
  Status capable = engine::CheckUnprivilegedCapable(binary);
  if (!capable.ok())
    return Fail("capabilities", "unprivileged mode: " + capable.message(),
                "`cedana slurm setup` as root gives them");
  return Ok("capabilities", "criu carries the file capabilities unprivileged mode needs");
}

Finding CheckCgroups() {
  struct statfs fs {};
  if (::statfs("/sys/fs/cgroup", &fs) != 0)
    return Warn("cgroups", "no cgroup filesystem at /sys/fs/cgroup",
                "mount cgroup2 at /sys/fs/cgroup: restored jobs join their SLURM job's cgroups");
  if (fs.f_type == CGROUP2_SUPER_MAGIC) return Ok("cgroups", "v2 (unified)");
  if (fs::Exists("/sys/fs/cgroup/unified")) return Ok("cgroups", "v1 with a v2 hierarchy (hybrid)");
  return Ok("cgroups", "v1");
}

// Writes `bytes` of random data into a probe checkpoint that is never committed, and removes it.
Result<double> StoreWriteMibPerSecond(storage::CheckpointStore& store, const std::string& owner,
                                      uint64_t bytes) {
  storage::CheckpointRef ref{owner, "cedana-check",
                             storage::CheckpointIdStamp(std::chrono::system_clock::now()) +
                                 fmt::format("probe{}", ::getpid())};
  std::vector<char> chunk(1 << 20);
  if (::getrandom(chunk.data(), chunk.size(), 0) != static_cast<ssize_t>(chunk.size()))
    return ErrnoStatus(errno, "getrandom");
  auto start = std::chrono::steady_clock::now();
  Status written = [&]() -> Status {
    CEDANA_ASSIGN_OR_RETURN(auto sink, store.CreateStream(ref, 0));
    for (uint64_t done = 0; done < bytes; done += chunk.size())
      CEDANA_RETURN_IF_ERROR(sink->Write(chunk.data(), chunk.size()));
    return sink->Close();
  }();
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  Status deleted = store.Delete(ref);
  CEDANA_RETURN_IF_ERROR(written);
  CEDANA_RETURN_IF_ERROR(deleted.WithContext("removing the probe " + ref.Path()));
  return static_cast<double>(bytes >> 20) / std::max(took.count(), 1e-6);
}

Finding CheckStore(const Config& config, const CheckOptions& options) {
  const char* name = "checkpoint dir";
  auto store = storage::OpenStore(config.checkpoint_dir, config.s3, StreamMemoryOf(config.node));
  if (!store.has_value())
    return Fail(name, store.error().message(),
                "set checkpoint.dir (CEDANA_CHECKPOINT_DIR) to an absolute path or "
                "s3://bucket/prefix");
  std::string where = (*store)->Describe();
  if (!IsRoot()) return Skip(name, where + ": the node daemon writes checkpoints as root", kAsRoot);
  std::string owner = UserName(::geteuid());
  bool s3 = storage::IsS3Location(config.checkpoint_dir);
  std::string fix = s3 ? "check the bucket, s3.endpoint_url and the s3.* credentials "
                         "(docs/storage.md)"
                       : "create it writable by root, or set checkpoint.dir to another dir";
  if (Status writable = (*store)->CheckWritable(owner); !writable.ok())
    return Fail(name, where + ": " + writable.message(), fix);
  if (!options.full) return Ok(name, where + ": writable");
  auto rate = StoreWriteMibPerSecond(**store, owner, options.probe_bytes);
  if (!rate.has_value())
    return Fail(name, where + ": writing a probe: " + rate.error().message(), fix);
  return Ok(name,
            fmt::format("{}: writable; {} MiB written durably at {:.0f} MiB/s (about {:.0f} s "
                        "per 10 GiB of job memory before compression)",
                        where, options.probe_bytes >> 20, *rate, 10240 / *rate));
}

// SLURM's version against the plugins' build: the one installed into SLURM's PluginDir when
// there is one (read from the file), else the builds in the plugin store. "" in *installed
// when SLURM is not here.
Finding CheckSlurmVersion(const CheckOptions& options, std::string* installed) {
  Result<std::string> version = slurm::InstalledSlurmVersion();
  if (!version.has_value())
    return Skip("slurm", version.error().code() == Code::kNotFound
                             ? "SLURM is not installed on this node"
                             : "SLURM is not configured on this node: " +
                                   LastLine(version.error().message()));
  *installed = *version;
  const std::string reinstall =
      "`cedana plugin install slurm slurm/wlm` (it takes the build for this SLURM), then "
      "`cedana slurm setup`";
  auto layout = slurm::LocateSlurm(slurm::DefaultSlurmInstallPaths());
  for (const char* so : {slurm::kTaskSo, slurm::kJobSubmitSo, slurm::kCliFilterSo}) {
    if (!layout.has_value()) break;  // no slurm.conf: nothing installed to read
    auto built = slurm::PluginFileSlurmVersion(layout->plugin_dir + "/" + so);
    if (!built.has_value()) continue;
    if (*built != *installed)
      return Fail("slurm",
                  fmt::format("SLURM {} here, but {}/{} is built for SLURM {}: SLURM loads it "
                              "only into that version",
                              *installed, layout->plugin_dir, so, *built),
                  reinstall);
    return Ok("slurm", "SLURM " + *installed + " (the installed plugins' version)");
  }
  std::vector<std::string> builds = slurm::PluginBuilds(options.plugin_store, {slurm::kTaskSo});
  if (std::find(builds.begin(), builds.end(), *installed) != builds.end())
    return Ok("slurm", "SLURM " + *installed + " (the plugin store has a build for it)");
  return Fail("slurm",
              fmt::format("SLURM {} here, and the plugin store {} has no build for it (builds: "
                          "{})",
                          *installed, options.plugin_store, slurm::ListedBuilds(builds)),
              "build cedana on a machine with this SLURM's libslurm-dev (scripts/setup.sh) and "
              "run cmake --install");
}

Finding CheckSlurmPlugins(const std::string& installed) {
  const char* name = "slurm plugins";
  if (installed.empty()) return Skip(name, "no working SLURM on this node");
  auto running = slurm::RunningSlurmConfig();
  if (!running.has_value())
    return Fail(name, "slurmctld does not answer: " + running.error().message(),
                "start slurmctld (`systemctl start slurmctld`) and check again");
  std::string plugstack_path = (*running)["PlugStackConfig"];
  if (plugstack_path.empty()) {
    auto layout = slurm::LocateSlurm(slurm::DefaultSlurmInstallPaths());
    if (layout.has_value()) plugstack_path = layout->plugstack_conf;
  }
  auto plugstack = fs::ReadFile(plugstack_path);
  std::vector<std::string> missing =
      slurm::MissingCedanaPlugins(*running, plugstack.has_value() ? *plugstack : "");
  std::string plugin_dir = (*running)["PluginDir"];
  if (size_t colon = plugin_dir.find(':'); colon != std::string::npos) plugin_dir.resize(colon);
  std::vector<std::string> absent;
  for (const char* so : {slurm::kTaskSo, slurm::kJobSubmitSo, slurm::kCliFilterSo, slurm::kSpankSo})
    if (!plugin_dir.empty() && !fs::Exists(plugin_dir + "/" + so)) absent.push_back(so);
  std::vector<std::string> problems;
  if (!missing.empty()) problems.push_back(fmt::format("not loaded: {}", fmt::join(missing, ", ")));
  if (!absent.empty())
    problems.push_back(fmt::format("not in PluginDir {}: {}", plugin_dir, fmt::join(absent, ", ")));
  if (!problems.empty())
    return Fail(name, fmt::format("{}", fmt::join(problems, "; ")),
                "`cedana slurm setup` as root on every SLURM node");
  return Ok(name, "task/cedana, job_submit/cedana, cli_filter/cedana and spank_cedana.so (" +
                      plugstack_path + ")");
}

Finding CheckController(const Config& config) {
  const char* name = "controller";
  if (config.url.empty())
    return Skip(name,
                "none configured (connection.url): preemption checkpoints work without it; "
                "policies and the web UI need it");
  protocol::ControllerClient client(config.url, config.auth_token);
  auto health = client.Get("/health");
  if (!health.has_value())
    return Warn(name, config.url + ": " + health.error().message(),
                "check connection.url and that the controller runs (`cedana-slurm daemon status` "
                "on its node)");
  return Ok(name, fmt::format("{}: cedana {}, database {}", config.url,
                              health->value("version", "?"), health->value("database", "?")));
}

}  // namespace

CheckReport CheckNode(const Config& config, const CheckOptions& options) {
  CheckReport report;
  auto add = [&](Finding f) { report.findings.push_back(std::move(f)); };
  add(CheckDaemon(config));
  std::string criu;
  add(CheckCriuBinary(config, &criu));
  add(CheckCriuKernel(criu));
  add(CheckBreakpoints(config));
  add(CheckSoftDirty(criu));
  add(CheckNetworkLock(config, criu));
  add(CheckCapabilities(config, criu));
  add(CheckCgroups());
  add(CheckStore(config, options));
  if (!options.full) return report;
  std::string slurm;
  add(CheckSlurmVersion(options, &slurm));
  add(CheckSlurmPlugins(slurm));
  add(CheckController(config));
  return report;
}

}  // namespace cedana::check
