// `cedana plugin install NAME[@VERSION]...`, `cedana plugin remove NAME...`, `cedana plugin list`.
// Plugins are copied from the local plugin store that `cmake --install` fills
// (CEDANA_PLUGIN_STORE_DIR, /usr/local/share/cedana/plugins/slurm by default), which holds one
// build per SLURM version (src/slurm/plugin_builds.h); install takes the build for the version
// this node's scontrol reports (or --slurm-version):
//   slurm      cedana-slurm -> /usr/local/bin (needs slurm/wlm, installed along)
//   slurm/wlm  the SLURM plugin .so files -> /usr/local/lib
// `cedana slurm setup` then puts them into SLURM's plugin dir and configures SLURM.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/cli_context.h"
#include "cli/plugin_store.h"
#include "common/fs.h"
#include "common/version.h"
#include "slurm/plugin_builds.h"
#include "slurm/running_slurm.h"

namespace cedana::cli {
namespace {

struct PluginFile {
  const char* name;
  bool to_bin;  // bin dir, else lib dir
};

struct PluginSpec {
  const char* name;
  const char* description;
  std::vector<PluginFile> files;
  const char* needs;  // another plugin installed along, or nullptr
};

const std::vector<PluginSpec>& KnownPlugins() {
  static const std::vector<PluginSpec> kKnownPlugins = {
      {"slurm",
       "cedana-slurm, the SLURM controller-side service",
       {{"cedana-slurm", true}},
       "slurm/wlm"},
      {"slurm/wlm",
       "SLURM plugins: spank, job_submit, cli_filter, task",
       {{"spank_cedana.so", false},
        {"job_submit_cedana.so", false},
        {"cli_filter_cedana.so", false},
        {"task_cedana.so", false}},
       nullptr},
  };
  return kKnownPlugins;
}

struct Dirs {
  std::string store = PluginStore();
  std::string bin = "/usr/local/bin";
  std::string lib = "/usr/local/lib";
  std::string state = "/var/lib/cedana/plugins.json";  // name -> installed version
  std::string slurm_version;  // the build to take; empty: this node's scontrol --version
};

// The key of plugins.json that names the SLURM version the installed build is for.
constexpr const char* kBuiltForSlurmKey = "built_for_slurm";

std::string Dest(const Dirs& d, const PluginFile& f) {
  return (f.to_bin ? d.bin : d.lib) + "/" + f.name;
}

const PluginSpec* Find(const std::string& name) {
  for (const auto& p : KnownPlugins())
    if (name == p.name) return &p;
  return nullptr;
}

std::string ValidNames() {
  std::string out;
  for (const auto& p : KnownPlugins()) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

// "slurm@main" -> the spec; the version must be what this build ships.
Result<const PluginSpec*> Resolve(const std::string& arg) {
  size_t at = arg.find('@');
  std::string name = arg.substr(0, at);
  std::string version = at == std::string::npos ? "" : arg.substr(at + 1);
  const PluginSpec* spec = Find(name);
  if (spec == nullptr)
    return InvalidArgumentError(
        fmt::format("unknown plugin \"{}\" (valid: {})", name, ValidNames()));
  if (!version.empty() && version != "main" && version != "latest" && version != kVersion &&
      version != std::string("v") + kVersion)
    return InvalidArgumentError(
        fmt::format("{}: version {} is not available (have: {})", name, version, kVersion));
  return spec;
}

nlohmann::json LoadState(const Dirs& d) {
  auto text = fs::ReadFile(d.state);
  if (!text.has_value()) return nlohmann::json::object();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

Status SaveState(const Dirs& d, const nlohmann::json& j) {
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(std::filesystem::path(d.state).parent_path().string()));
  return fs::WriteFileAtomic(d.state, j.dump(2) + "\n", 0644);
}

Status Copy(const std::string& from, const std::string& to) {
  CEDANA_ASSIGN_OR_RETURN(std::string data, fs::ReadFile(from));
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(std::filesystem::path(to).parent_path().string()));
  CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(to, data, 0755));
  ::chmod(to.c_str(), 0755);
  return OkStatus();
}

// Named plugins plus what they need, each once, dependencies first.
Result<std::vector<const PluginSpec*>> Expand(const std::vector<std::string>& args) {
  std::vector<const PluginSpec*> out;
  auto add = [&](const PluginSpec* p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const auto& a : args) {
    CEDANA_ASSIGN_OR_RETURN(const PluginSpec* spec, Resolve(a));
    if (spec->needs != nullptr) add(Find(spec->needs));
    add(spec);
  }
  return out;
}

std::vector<std::string> FileNames(const std::vector<const PluginSpec*>& plugins) {
  std::vector<std::string> names;
  for (const auto* p : plugins)
    for (const auto& f : p->files) names.emplace_back(f.name);
  return names;
}

// The SLURM version whose build to install: --slurm-version, else this node's; nullopt when
// SLURM is not installed or not configured here (scontrol needs slurm.conf even for --version).
std::optional<std::string> WantedSlurmVersion(const Dirs& d) {
  if (!d.slurm_version.empty()) return d.slurm_version;
  Result<std::string> running = slurm::InstalledSlurmVersion();
  if (running.has_value()) return *running;
  return std::nullopt;
}

Status Install(const Dirs& d, const std::vector<std::string>& args) {
  CEDANA_ASSIGN_OR_RETURN(auto plugins, Expand(args));
  // The build must hold every file first, so that a missing one changes nothing.
  CEDANA_ASSIGN_OR_RETURN(std::string build, slurm::ChoosePluginBuild(d.store, FileNames(plugins),
                                                                      WantedSlurmVersion(d)));
  std::string built_for = std::filesystem::path(build).filename().string();
  nlohmann::json state = LoadState(d);
  for (const auto* p : plugins) {
    for (const auto& f : p->files) {
      std::string from = build + "/" + f.name;
      CEDANA_RETURN_IF_ERROR(Copy(from, Dest(d, f))) << "installing " << p->name;
      std::printf("installed %s\n", Dest(d, f).c_str());
    }
    state[p->name] = kVersion;
    std::printf("plugin %s %s installed (built for SLURM %s)\n", p->name, kVersion,
                built_for.c_str());
  }
  state[kBuiltForSlurmKey] = built_for;
  return SaveState(d, state);
}

Status Remove(const Dirs& d, const std::vector<std::string>& args) {
  std::vector<const PluginSpec*> plugins;
  for (const auto& a : args) {
    CEDANA_ASSIGN_OR_RETURN(const PluginSpec* spec, Resolve(a));
    plugins.push_back(spec);
  }
  nlohmann::json state = LoadState(d);
  for (const auto* p : plugins) {
    for (const auto& f : p->files) {
      std::string path = Dest(d, f);
      if (::unlink(path.c_str()) == 0) {
        std::printf("removed %s\n", path.c_str());
      } else if (errno != ENOENT) {
        return ErrnoStatus(errno, "removing " + path);
      }
    }
    state.erase(p->name);
    std::printf("plugin %s removed\n", p->name);
  }
  return SaveState(d, state);
}

// One line per plugin; FOR SLURM is the version of the installed build, BUILDS the SLURM
// versions the store has a build for.
void List(const Dirs& d) {
  nlohmann::json state = LoadState(d);
  std::string built_for = state.value(kBuiltForSlurmKey, std::string("-"));
  std::printf("%-10s %-9s %-9s %-10s %-18s %s\n", "PLUGIN", "INSTALLED", "VERSION", "FOR SLURM",
              "BUILDS IN STORE", "DESCRIPTION");
  for (const auto& p : KnownPlugins()) {
    bool installed = true;
    std::vector<std::string> names;
    for (const auto& f : p.files) {
      installed = installed && fs::Exists(Dest(d, f));
      names.emplace_back(f.name);
    }
    std::string builds = fmt::format("{}", fmt::join(slurm::PluginBuilds(d.store, names), ","));
    std::string version = !installed ? "-" : state.value(p.name, std::string("unknown"));
    std::printf("%-10s %-9s %-9s %-10s %-18s %s\n", p.name, installed ? "yes" : "no",
                version.c_str(), installed ? built_for.c_str() : "-",
                builds.empty() ? "-" : builds.c_str(), p.description);
  }
}

}  // namespace

void AddPluginCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    Dirs dirs;
    std::vector<std::string> names;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* plugin = app.add_subcommand("plugin", "Install, remove and list cedana plugins");
  plugin->require_subcommand(1);
  plugin->add_option("--store", o->dirs.store, "Plugin store to install from")
      ->capture_default_str();
  plugin->add_option("--bin-dir", o->dirs.bin, "Where binaries go")->capture_default_str();
  plugin->add_option("--lib-dir", o->dirs.lib, "Where plugin libraries go")->capture_default_str();
  plugin->add_option("--state-file", o->dirs.state, "Record of installed plugin versions")
      ->capture_default_str();

  auto* install = plugin->add_subcommand(
      "install", "Install plugins: " + ValidNames() + " (NAME@VERSION accepted)");
  install->add_option("names", o->names, "Plugins")->required()->expected(-1);
  install->add_option("--slurm-version", o->dirs.slurm_version,
                      "Install the build for this SLURM version (default: the version this "
                      "node's scontrol reports)");
  install->callback([&ctx, o] {
    if (Status s = Install(o->dirs, o->names); !s.ok()) ctx.Fail(s);
  });
  auto* remove = plugin->add_subcommand("remove", "Remove installed plugins");
  remove->add_option("names", o->names, "Plugins")->required()->expected(-1);
  remove->callback([&ctx, o] {
    if (Status s = Remove(o->dirs, o->names); !s.ok()) ctx.Fail(s);
  });
  plugin->add_subcommand("list", "List plugins, whether installed, and their versions")
      ->callback([o] { List(o->dirs); });
}

}  // namespace cedana::cli
