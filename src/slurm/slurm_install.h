// SlurmInstall: the file operations behind `cedana slurm setup` and `cedana slurm destroy`.
// Setup backs up slurm.conf and plugstack.conf once, installs the plugin .so files into SLURM's
// PluginDir and cedana-slurm into a bin dir, edits both files (slurm_conf_editor.h), records what
// it did, and restarts the SLURM daemons. Destroy undoes exactly that from the record.
// All paths come from SlurmInstallPaths so tests run on temp dirs. Not thread-safe (one CLI
// process at a time is expected); runs as root on a real node.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "slurm/node_role.h"

namespace cedana::slurm {

// The files setup installs, by name.
inline constexpr const char* kSpankSo = "spank_cedana.so";
inline constexpr const char* kJobSubmitSo = "job_submit_cedana.so";
inline constexpr const char* kCliFilterSo = "cli_filter_cedana.so";
inline constexpr const char* kTaskSo = "task_cedana.so";
inline constexpr const char* kSlurmBinary = "cedana-slurm";
inline constexpr const char* kBackupSuffix = ".cedana-backup";
// The systemd units a role installs (packaging/), by file name.
inline constexpr const char* kNodeDaemonUnit = "cedana.service";
inline constexpr const char* kControllerUnit = "cedana-slurm.service";

struct SlurmInstallPaths {
  std::string slurm_conf;  // slurm.conf; default $SLURM_CONF, else /etc/slurm/slurm.conf
  std::string bin_dir = "/usr/local/bin";  // where cedana-slurm goes
  // The setup record (JSON): what was installed, whether plugstack.conf existed before.
  std::string record = "/var/lib/cedana/slurm-setup.json";
  // PluginDir override for tests; empty means slurm.conf's PluginDir (or SLURM's default).
  std::string plugin_dir;
  std::string unit_dir = "/etc/systemd/system";  // where a role's systemd units go
  // Present when systemd manages this node (sd_booted's test); units are then enabled and
  // started with `systemctl`, found through PATH unless tests name another.
  std::string systemd_run_dir = "/run/systemd/system";
  std::string systemctl = "systemctl";
};

// Defaults for this machine: slurm_conf from SLURM_CONF (when set and non-empty), else
// /etc/slurm/slurm.conf.
SlurmInstallPaths DefaultSlurmInstallPaths();

// Where SLURM's files are, read from slurm.conf.
struct SlurmLayout {
  std::string slurm_conf;
  std::string plugstack_conf;  // PlugStackConfig, else plugstack.conf beside slurm.conf
  std::string plugin_dir;      // PluginDir (first entry), else kDefaultPluginDir
  std::string slurmctld_pid_file;
  std::string slurmd_pid_file;
};
// kNotFound "SLURM not found: no slurm.conf at ..." when slurm.conf is missing.
Result<SlurmLayout> LocateSlurm(const SlurmInstallPaths& paths);

struct SetupOptions {
  NodeRole role = NodeRole::kAll;  // which files, units and restarts (node_role.h)
  // Directories searched, in order, for each file to install (the first hit wins), and for the
  // role's systemd units.
  std::vector<std::string> source_dirs;
  bool restart = true;  // restart slurmctld/slurmd afterwards (tests turn this off)
  // The SLURM version this node runs ("24.11.5"), empty when unknown. When set, every plugin
  // file must have been built for it (plugin_file_version.h), and slurm.conf gets the
  // preemption notice in that version's form.
  std::string slurm_version;
  // Unprivileged mode: binaries given the seeds' file capabilities (CAP_SYS_PTRACE,
  // CAP_DAC_READ_SEARCH, CAP_CHECKPOINT_RESTORE) after the copies, e.g. criu and cedana;
  // the installed cedana-slurm is added by setup itself when this is not empty.
  std::vector<std::string> capability_binaries;
};

// What setup/destroy did, in order, for the CLI to print; warnings are things left out.
struct InstallReport {
  std::vector<std::string> actions;
  std::vector<std::string> warnings;
};

// Finds each of `names` in `dirs`: name -> path. kNotFound naming every missing one and the
// dirs searched.
Result<std::map<std::string, std::string>> FindSourceFiles(const std::vector<std::string>& dirs,
                                                           const std::vector<std::string>& names);

// Installs and configures. Nothing is changed when a required file is missing, a plugin was
// built for another SLURM version than options.slurm_version, or SLURM is not found. Running it
// again is safe: backups are made only once, and edits are idempotent. Errors: kNotFound (SLURM or
// a file missing), kFailedPrecondition (a plugin built for another SLURM version), errno-derived
// codes for I/O failures (the record then says what was done so far, and destroy undoes it).
Result<InstallReport> SetupSlurm(const SlurmInstallPaths& paths, const SetupOptions& options);

// Restores slurm.conf and plugstack.conf byte-identical from the backups (removing
// plugstack.conf when setup created it), stops, disables and removes the units it installed,
// removes the installed files, the file capabilities setup gave, and the record, and restarts
// the daemons of the role setup ran as when `restart`. kNotFound when there is no record (setup was
// not run).
Result<InstallReport> DestroySlurm(const SlurmInstallPaths& paths, bool restart);

}  // namespace cedana::slurm
