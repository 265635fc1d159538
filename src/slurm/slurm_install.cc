#include "slurm/slurm_install.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/capabilities.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "slurm/plugin_file_version.h"
#include "slurm/slurm_conf_editor.h"
#include "slurm/slurm_daemon_restart.h"

namespace cedana::slurm {
namespace {

constexpr int kRecordFormat = 1;

// Where each file setup installs goes: SLURM's PluginDir, else the bin dir.
bool IsPlugin(const std::string& name) { return name != kSlurmBinary; }

// What setup did, kept in SlurmInstallPaths::record so that destroy undoes exactly that.
struct SetupRecord {
  std::string slurm_conf;
  std::string plugstack_conf;
  bool plugstack_existed = false;
  std::vector<std::string> installed;
  std::vector<std::string> capabilities;  // binaries given file capabilities (unprivileged mode)
  std::vector<std::string> units;         // systemd unit files installed
  NodeRole role = NodeRole::kAll;
};

std::string Dirname(const std::string& path) {
  std::string d = std::filesystem::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Copies bytes, mode and (when allowed) owner; the destination is replaced atomically so a
// daemon that has the old .so mapped keeps its copy.
Status CopyFile(const std::string& from, const std::string& to) {
  struct stat st;
  if (::stat(from.c_str(), &st) != 0) return ErrnoStatus(errno, "stat " + from);
  CEDANA_ASSIGN_OR_RETURN(std::string data, fs::ReadFile(from));
  CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(to, data, st.st_mode & 07777));
  ::chmod(to.c_str(), st.st_mode & 07777);  // WriteFileAtomic's mode is filtered by the umask
  if (::geteuid() == 0) (void)::chown(to.c_str(), st.st_uid, st.st_gid);
  return OkStatus();
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "removing " + path);
  return OkStatus();
}

// Writes `text` over `path`, keeping the mode the file had (0644 for a new file).
Status RewriteFile(const std::string& path, const std::string& text) {
  struct stat st;
  mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(path, text, mode));
  ::chmod(path.c_str(), mode);
  return OkStatus();
}

Result<std::optional<SetupRecord>> LoadRecord(const std::string& path) {
  if (!fs::Exists(path)) return std::optional<SetupRecord>();
  CEDANA_ASSIGN_OR_RETURN(std::string text, fs::ReadFile(path));
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != kRecordFormat)
    return FailedPreconditionError("unreadable setup record " + path + ": remove it to continue");
  SetupRecord r;
  r.slurm_conf = j.value("slurm_conf", "");
  r.plugstack_conf = j.value("plugstack_conf", "");
  r.plugstack_existed = j.value("plugstack_existed", false);
  r.installed = j.value("installed", std::vector<std::string>());
  r.capabilities = j.value("capabilities", std::vector<std::string>());
  r.units = j.value("units", std::vector<std::string>());
  CEDANA_ASSIGN_OR_RETURN(r.role, ParseNodeRole(j.value("role", "all")));
  return std::optional<SetupRecord>(std::move(r));
}

Status SaveRecord(const std::string& path, const SetupRecord& r) {
  nlohmann::json j = {{"format", kRecordFormat},
                      {"slurm_conf", r.slurm_conf},
                      {"plugstack_conf", r.plugstack_conf},
                      {"plugstack_existed", r.plugstack_existed},
                      {"installed", r.installed},
                      {"capabilities", r.capabilities},
                      {"units", r.units},
                      {"role", NodeRoleName(r.role)}};
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(Dirname(path)));
  return fs::WriteFileAtomic(path, j.dump(2) + "\n", 0644);
}

// Backs `file` up to <file>.cedana-backup unless a backup exists: the first backup is the
// pristine file, later setups must not overwrite it with an already edited one.
Status BackupOnce(const std::string& file, InstallReport* report) {
  std::string backup = file + kBackupSuffix;
  if (fs::Exists(backup)) return OkStatus();
  CEDANA_RETURN_IF_ERROR(CopyFile(file, backup)) << "backing up " << file;
  report->actions.push_back("backed up " + file + " to " + backup);
  return OkStatus();
}

// Puts `file` back from its backup, byte for byte, and removes the backup.
Status RestoreBackup(const std::string& file, InstallReport* report) {
  std::string backup = file + kBackupSuffix;
  if (!fs::Exists(backup)) {
    report->warnings.push_back("no backup " + backup + ": " + file + " left as it is");
    return OkStatus();
  }
  CEDANA_RETURN_IF_ERROR(CopyFile(backup, file)) << "restoring " << file;
  CEDANA_RETURN_IF_ERROR(RemoveFile(backup));
  report->actions.push_back("restored " + file + " from " + backup);
  return OkStatus();
}

Status Restart(const SlurmLayout& layout, const RoleParts& parts, InstallReport* report) {
  SlurmDaemonFiles files{layout.slurm_conf, layout.slurmctld_pid_file, layout.slurmd_pid_file,
                         parts.restart_slurmctld, parts.restart_slurmd};
  return RestartSlurmDaemons(files, &report->actions);
}

// SLURM refuses a job_submit, cli_filter or task plugin built for another version (and a
// slurmctld that cannot load one does not start): compare before anything is changed.
Status CheckBuiltFor(const std::map<std::string, std::string>& sources,
                     const std::string& slurm_version) {
  for (const auto& [name, path] : sources) {
    if (!IsPlugin(name)) continue;
    Result<std::string> built = PluginFileSlurmVersion(path);
    if (!built.has_value()) {
      if (built.error().code() == Code::kNotFound) continue;  // no plugin_version to compare
      return built.error();
    }
    if (*built != slurm_version)
      return FailedPreconditionError(path + " was built for SLURM " + *built +
                                     " but this node runs SLURM " + slurm_version +
                                     ", and SLURM loads plugins only into the exact version "
                                     "they were built for");
  }
  return OkStatus();
}

bool SystemdManages(const SlurmInstallPaths& paths) {
  struct stat st;
  return ::lstat(paths.systemd_run_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status Systemctl(const SlurmInstallPaths& paths, std::vector<std::string> args,
                 InstallReport* report) {
  subprocess::Command c;
  c.argv = {paths.systemctl};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  std::string output, line = "systemctl";
  for (const auto& a : args) line += " " + a;
  CEDANA_ASSIGN_OR_RETURN(subprocess::Exit exit,
                          subprocess::Run(c, subprocess::Output::kStdoutAndStderr, &output));
  if (!exit.ok()) return UnavailableError(line + " failed: " + output);
  report->actions.push_back("ran " + line);
  return OkStatus();
}

std::string UnitName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Installs the role's units (the record already names them); with systemd, enables and
// (re)starts them, so that a new build of the node daemon or the controller runs at once. Without
// systemd they are left for the site to start, with a warning saying how.
Status InstallUnits(const SlurmInstallPaths& paths, const std::map<std::string, std::string>& units,
                    InstallReport* report) {
  if (units.empty()) return OkStatus();
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(paths.unit_dir));
  std::vector<std::string> names;
  for (const auto& [name, from] : units) {
    std::string to = paths.unit_dir + "/" + name;
    CEDANA_RETURN_IF_ERROR(CopyFile(from, to)) << "installing the unit " << name;
    ::chmod(to.c_str(), 0644);
    report->actions.push_back("installed " + to + " (from " + from + ")");
    names.push_back(name);
  }
  if (!SystemdManages(paths)) {
    for (const auto& name : names)
      report->warnings.push_back(
          "systemd does not manage this node: " + name + " is installed but not started (start " +
          (name == kNodeDaemonUnit ? "`cedana daemon start`" : "`cedana-slurm daemon start`") +
          " by hand)");
    return OkStatus();
  }
  CEDANA_RETURN_IF_ERROR(Systemctl(paths, {"daemon-reload"}, report));
  for (const auto& name : names) {
    CEDANA_RETURN_IF_ERROR(Systemctl(paths, {"enable", name}, report));
    CEDANA_RETURN_IF_ERROR(Systemctl(paths, {"restart", name}, report));
  }
  return OkStatus();
}

Status RemoveUnits(const SlurmInstallPaths& paths, const std::vector<std::string>& units,
                   InstallReport* report) {
  bool systemd = SystemdManages(paths), removed = false;
  for (const auto& file : units) {
    if (!fs::Exists(file)) continue;
    if (systemd)
      CEDANA_RETURN_IF_ERROR(Systemctl(paths, {"disable", "--now", UnitName(file)}, report));
    CEDANA_RETURN_IF_ERROR(RemoveFile(file));
    report->actions.push_back("removed " + file);
    removed = true;
  }
  if (systemd && removed) CEDANA_RETURN_IF_ERROR(Systemctl(paths, {"daemon-reload"}, report));
  return OkStatus();
}

}  // namespace

SlurmInstallPaths DefaultSlurmInstallPaths() {
  SlurmInstallPaths p;
  const char* env = std::getenv("SLURM_CONF");
  p.slurm_conf = env != nullptr && *env != '\0' ? env : "/etc/slurm/slurm.conf";
  return p;
}

Result<SlurmLayout> LocateSlurm(const SlurmInstallPaths& paths) {
  if (!IsRegularFile(paths.slurm_conf))
    return NotFoundError("SLURM not found: no slurm.conf at " + paths.slurm_conf +
                         " (set SLURM_CONF to its path)");
  CEDANA_ASSIGN_OR_RETURN(std::string conf, fs::ReadFile(paths.slurm_conf));
  SlurmLayout l;
  l.slurm_conf = paths.slurm_conf;
  l.plugstack_conf =
      ReadConfKeyOr(conf, "PlugStackConfig", Dirname(paths.slurm_conf) + "/plugstack.conf");
  l.plugin_dir = paths.plugin_dir.empty() ? PluginDir(conf) : paths.plugin_dir;
  l.slurmctld_pid_file = ReadConfKeyOr(conf, "SlurmctldPidFile", kDefaultSlurmctldPidFile);
  l.slurmd_pid_file = ReadConfKeyOr(conf, "SlurmdPidFile", kDefaultSlurmdPidFile);
  return l;
}

Result<std::map<std::string, std::string>> FindSourceFiles(const std::vector<std::string>& dirs,
                                                           const std::vector<std::string>& names) {
  std::map<std::string, std::string> found;
  std::string missing;
  for (const auto& name : names) {
    for (const auto& dir : dirs) {
      std::string path = dir + "/" + name;
      if (IsRegularFile(path)) {
        found[name] = path;
        break;
      }
    }
    if (!found.contains(name)) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) {
    std::string where;
    for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d;
    return NotFoundError("missing " + missing + " (looked in " + where + ")");
  }
  return found;
}

Result<InstallReport> SetupSlurm(const SlurmInstallPaths& paths, const SetupOptions& options) {
  CEDANA_ASSIGN_OR_RETURN(SlurmLayout layout, LocateSlurm(paths));
  const RoleParts parts = PartsOf(options.role);
  CEDANA_ASSIGN_OR_RETURN(auto sources, FindSourceFiles(options.source_dirs, parts.files));
  CEDANA_ASSIGN_OR_RETURN(auto units, FindSourceFiles(options.source_dirs, parts.units));
  CEDANA_ASSIGN_OR_RETURN(std::optional<SetupRecord> previous, LoadRecord(paths.record));
  if (!options.slurm_version.empty())
    CEDANA_RETURN_IF_ERROR(CheckBuiltFor(sources, options.slurm_version));
  InstallReport report;

  // Order matters: backups first, then the record (so that destroy can undo a setup that
  // fails half-way), then files, then the config edits that make SLURM load those files.
  SetupRecord record;
  record.role = options.role;
  record.slurm_conf = layout.slurm_conf;
  record.plugstack_conf = layout.plugstack_conf;
  record.plugstack_existed =
      previous ? previous->plugstack_existed : fs::Exists(layout.plugstack_conf);
  if (previous) {
    record.installed = previous->installed;
    record.capabilities = previous->capabilities;
    record.units = previous->units;
  }
  std::vector<std::string> capability_binaries = options.capability_binaries;
  if (!capability_binaries.empty() && sources.count(kSlurmBinary))
    capability_binaries.push_back(paths.bin_dir + "/" + kSlurmBinary);
  for (const auto& bin : capability_binaries)
    if (std::find(record.capabilities.begin(), record.capabilities.end(), bin) ==
        record.capabilities.end())
      record.capabilities.push_back(bin);
  CEDANA_RETURN_IF_ERROR(BackupOnce(layout.slurm_conf, &report));
  if (record.plugstack_existed && fs::Exists(layout.plugstack_conf)) {
    CEDANA_RETURN_IF_ERROR(BackupOnce(layout.plugstack_conf, &report));
  }

  std::vector<std::pair<std::string, std::string>> copies;
  for (const auto& [name, from] : sources) {
    std::string dest = (IsPlugin(name) ? layout.plugin_dir : paths.bin_dir) + "/" + name;
    copies.emplace_back(from, dest);
    if (std::find(record.installed.begin(), record.installed.end(), dest) == record.installed.end())
      record.installed.push_back(dest);
  }
  for (const auto& [name, from] : units) {
    std::string dest = paths.unit_dir + "/" + name;
    if (std::find(record.units.begin(), record.units.end(), dest) == record.units.end())
      record.units.push_back(dest);
  }
  CEDANA_RETURN_IF_ERROR(SaveRecord(paths.record, record)) << "writing " << paths.record;

  for (const auto& [from, to] : copies) {
    CEDANA_RETURN_IF_ERROR(fs::MakeDirs(Dirname(to)));
    CEDANA_RETURN_IF_ERROR(CopyFile(from, to)) << "installing " << to;
    report.actions.push_back("installed " + to + " (from " + from + ")");
  }
  // After the copies: replacing a file drops its capabilities.
  for (const auto& bin : capability_binaries) {
    CEDANA_RETURN_IF_ERROR(SetFileCapabilities(bin, kUnprivilegedModeCapabilities))
        << "unprivileged mode";
    report.actions.push_back("setcap " + CapabilityNames(kUnprivilegedModeCapabilities) + "+eip " +
                             bin);
  }

  CEDANA_ASSIGN_OR_RETURN(std::string conf, fs::ReadFile(layout.slurm_conf));
  std::string edited =
      AddPreemptNoticeToSlurmConf(AddCedanaToSlurmConf(conf), options.slurm_version);
  if (edited != conf) {
    CEDANA_RETURN_IF_ERROR(RewriteFile(layout.slurm_conf, edited));
    report.actions.push_back("edited " + layout.slurm_conf);
  }
  if (parts.edit_plugstack) {
    std::string plugstack;
    if (fs::Exists(layout.plugstack_conf)) {
      CEDANA_ASSIGN_OR_RETURN(plugstack, fs::ReadFile(layout.plugstack_conf));
    }
    std::string spank_line = AddSpankToPlugstack(plugstack, layout.plugin_dir + "/" + kSpankSo);
    if (spank_line != plugstack || !fs::Exists(layout.plugstack_conf)) {
      CEDANA_RETURN_IF_ERROR(RewriteFile(layout.plugstack_conf, spank_line));
      report.actions.push_back("edited " + layout.plugstack_conf);
    }
  }
  CEDANA_RETURN_IF_ERROR(InstallUnits(paths, units, &report));

  if (options.restart) {
    CEDANA_RETURN_IF_ERROR(Restart(layout, parts, &report)) << "restarting SLURM";
  }
  return report;
}

Result<InstallReport> DestroySlurm(const SlurmInstallPaths& paths, bool restart) {
  CEDANA_ASSIGN_OR_RETURN(std::optional<SetupRecord> record, LoadRecord(paths.record));
  if (!record)
    return NotFoundError("cedana slurm setup has not been run here (no record at " + paths.record +
                         ")");
  InstallReport report;
  // Config first: once it no longer names our plugins, removing their files is safe.
  CEDANA_RETURN_IF_ERROR(RestoreBackup(record->slurm_conf, &report));
  if (record->plugstack_existed) {
    CEDANA_RETURN_IF_ERROR(RestoreBackup(record->plugstack_conf, &report));
  } else if (fs::Exists(record->plugstack_conf)) {
    CEDANA_RETURN_IF_ERROR(RemoveFile(record->plugstack_conf));
    report.actions.push_back("removed " + record->plugstack_conf + " (setup created it)");
  }
  CEDANA_RETURN_IF_ERROR(RemoveUnits(paths, record->units, &report));
  for (const auto& bin : record->capabilities) {
    if (!fs::Exists(bin)) continue;
    CEDANA_RETURN_IF_ERROR(RemoveFileCapabilities(bin));
    report.actions.push_back("removed the file capabilities of " + bin);
  }
  for (const auto& file : record->installed) {
    if (!fs::Exists(file)) continue;
    CEDANA_RETURN_IF_ERROR(RemoveFile(file));
    report.actions.push_back("removed " + file);
  }
  CEDANA_RETURN_IF_ERROR(RemoveFile(paths.record));

  if (restart) {
    SlurmInstallPaths located = paths;
    located.slurm_conf = record->slurm_conf;
    auto layout = LocateSlurm(located);
    if (!layout.has_value()) {
      report.warnings.push_back("not restarting SLURM: " + layout.error().message());
    } else {
      CEDANA_RETURN_IF_ERROR(Restart(*layout, PartsOf(record->role), &report))
          << "restarting SLURM";
    }
  }
  return report;
}

}  // namespace cedana::slurm
