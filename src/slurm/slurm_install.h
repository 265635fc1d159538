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

namespace cedana::slurm {

// The files setup installs, by name.
inline constexpr const char* kSpankSo = "spank_cedana.so";
inline constexpr const char* kJobSubmitSo = "job_submit_cedana.so";
inline constexpr const char* kCliFilterSo = "cli_filter_cedana.so";
inline constexpr const char* kTaskSo = "task_cedana.so";
inline constexpr const char* kSlurmBinary = "cedana-slurm";
inline constexpr const char* kBackupSuffix = ".cedana-backup";

struct SlurmInstallPaths {
  std::string slurm_conf;  // slurm.conf; default $SLURM_CONF, else /etc/slurm/slurm.conf
  std::string bin_dir = "/usr/local/bin";  // where cedana-slurm goes
  // The setup record (JSON): what was installed, whether plugstack.conf existed before.
  std::string record = "/var/lib/cedana/slurm-setup.json";
  // PluginDir override for tests; empty means slurm.conf's PluginDir (or SLURM's default).
  std::string plugin_dir;
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
  // Directories searched, in order, for each file to install (the first hit wins).
  std::vector<std::string> source_dirs;
  bool restart = true;  // restart slurmctld/slurmd afterwards (tests turn this off)
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

// Finds each file in `source_dirs`: name -> path. Optional files missing are left out.
// kNotFound naming every missing required file.
Result<std::map<std::string, std::string>> FindSourceFiles(const std::vector<std::string>& dirs);

// Installs and configures. Nothing is changed when a required file is missing or SLURM is not
// found. Running it again is safe: backups are made only once, and edits are idempotent.
// Errors: kNotFound (SLURM or a file missing), errno-derived codes for I/O failures (the
// record then says what was done so far, and destroy undoes it).
Result<InstallReport> SetupSlurm(const SlurmInstallPaths& paths, const SetupOptions& options);

// Restores slurm.conf and plugstack.conf byte-identical from the backups (removing
// plugstack.conf when setup created it), removes the installed files, the file capabilities
// setup gave, and the record, and
// restarts the daemons when `restart`. kNotFound when there is no record (setup was not run).
Result<InstallReport> DestroySlurm(const SlurmInstallPaths& paths, bool restart);

}  // namespace cedana::slurm
