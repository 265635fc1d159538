// SlurmConf editing: the text transforms `cedana slurm setup` applies to slurm.conf and
// plugstack.conf, and a reader for single keys. Pure functions (string in, string out): lines
// they do not change stay byte-identical, and each edit is idempotent (applying it twice gives
// the same text as applying it once). Keys match case-insensitively, as SLURM reads them.
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cedana::slurm {

// SLURM's defaults for the keys we read, as Debian's slurm-wlm 22.05 packages them.
inline constexpr std::string_view kDefaultPluginDir = "/usr/lib/x86_64-linux-gnu/slurm-wlm";
inline constexpr std::string_view kDefaultSlurmctldPidFile = "/run/slurmctld.pid";
inline constexpr std::string_view kDefaultSlurmdPidFile = "/run/slurmd.pid";

// The value of the last uncommented `Key=Value` line for `key` (case-insensitive), without
// surrounding whitespace, quotes or a trailing comment; nullopt when the key is absent.
std::optional<std::string> ReadConfKey(std::string_view conf, std::string_view key);
// ReadConfKey, or `fallback` when absent or empty.
std::string ReadConfKeyOr(std::string_view conf, std::string_view key, std::string_view fallback);
// PluginDir (the first directory when it is a colon-separated list), defaulting as SLURM does.
std::string PluginDir(std::string_view conf);

// Adds `plugin` ("task/cedana") to the comma-separated list of `key` ("TaskPlugin") once:
// appended to the last such line when present (entries match with or without their
// "<type>/" prefix), else a new line `<key>=<when_absent>` is appended to the file.
// A list that is only "none" (or "<type>/none") is replaced by the plugin.
std::string AddPluginToList(std::string_view conf, std::string_view key, std::string_view plugin,
                            std::string_view when_absent);

// Whether the comma-separated plugin list `list` ("task/affinity,task/cedana") names `plugin`
// ("task/cedana"; entries match with or without their "<type>/" prefix).
bool ListHasPlugin(std::string_view list, std::string_view plugin);

// The three slurm.conf edits of setup.
//   TaskPlugin=...,task/cedana  (or a new line TaskPlugin=task/affinity,task/cedana)
//   CliFilterPlugins=...,cli_filter/cedana
//   JobSubmitPlugins=...,job_submit/cedana
std::string AddCedanaToSlurmConf(std::string_view conf);

// SLURM's notice of a preemption to the jobs that ask for one: `preempt_send_user_signal` in
// SlurmctldParameters up to SLURM 22.05, `send_user_signal` in PreemptParameters from 23.02 on
// (`slurm_version` "24.11.5"; empty or unreadable means the older form).
// Then slurmctld sends an enabled job's batch step the signal job_submit/cedana gives it (SIGUSR1)
// when the preemption begins, instead of the job proxy asking slurmctld twice a second.
std::string AddPreemptNoticeToSlurmConf(std::string_view conf, const std::string& slurm_version);
// Whether `slurm_version` (e.g. "24.11.5") names PreemptParameters=send_user_signal.
bool PreemptNoticeInPreemptParameters(const std::string& slurm_version);

// Whether an uncommented line of plugstack.conf loads a file named spank_cedana.so.
bool PlugstackLoadsCedana(std::string_view plugstack);
// Adds the line `required <spank_so_path>` to plugstack.conf unless PlugstackLoadsCedana.
std::string AddSpankToPlugstack(std::string_view plugstack, std::string_view spank_so_path);

}  // namespace cedana::slurm
