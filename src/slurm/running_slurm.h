// RunningSlurm: what the SLURM of this node says about itself through scontrol: its version
// (setup refuses plugins built for another), the configuration slurmctld runs with (which of
// cedana's plugins it loads: `cedana check`), and where its nodes are (a job's checkpoint over
// several nodes). Stateless; each call runs scontrol.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cedana::slurm {

// "22.05.8" of `scontrol --version`'s line "slurm 22.05.8" (Debian's: "slurm-wlm 22.05.8"),
// after any warnings; "" when there is none.
std::string ParseScontrolVersion(std::string_view output);
// The installed SLURM's version. kNotFound when scontrol is not installed; kUnavailable when it
// fails (no slurm.conf: SLURM is not configured on this node) or says nothing useful.
Result<std::string> InstalledSlurmVersion();

// `scontrol show config`'s "Key  = value" lines, by key; other lines are left out. A value
// SLURM prints as "(null)" (unset: PlugStackConfig without the key in slurm.conf) is "".
std::map<std::string, std::string> ParseShowConfig(std::string_view output);
// The configuration the running slurmctld reports. kUnavailable when scontrol cannot be run or
// slurmctld does not answer, with scontrol's words.
Result<std::map<std::string, std::string>> RunningSlurmConfig();

// The node names of a SLURM host list ("compute-[01-02]"), as `scontrol show hostnames` says.
Result<std::vector<std::string>> Hostnames(const std::string& list);
// Where SLURM reaches node `name`: its NodeAddr, as `scontrol show node` says. kNotFound when it
// has none.
Result<std::string> NodeAddress(const std::string& name);

// Which of cedana's plugins a running configuration (ParseShowConfig) and its plugstack.conf's
// text do not load, as slurm.conf names them: "task/cedana", "job_submit/cedana",
// "cli_filter/cedana", "spank_cedana.so". Empty when all are loaded.
std::vector<std::string> MissingCedanaPlugins(const std::map<std::string, std::string>& config,
                                              std::string_view plugstack);

}  // namespace cedana::slurm
