// PluginBuilds: the plugin store holds one build of the SLURM plugins and cedana-slurm per SLURM
// version, each in a directory named after it (<store>/24.11.5/spank_cedana.so, ...), because
// SLURM loads its job_submit, cli_filter and task plugins only into the exact version they were
// built for. `cedana plugin install` picks the build for the version the node's scontrol
// reports. Reads the store only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::slurm {

// The SLURM versions the store has a build for, oldest first ("22.05.8" < "24.11.5"): its
// subdirectories named like a version that hold every file of `required`. Empty when the store
// is missing.
std::vector<std::string> PluginBuilds(const std::string& store,
                                      const std::vector<std::string>& required);

// "22.05.8, 24.11.5", or "none", for messages.
std::string ListedBuilds(const std::vector<std::string>& versions);

// The build directory for `slurm_version` (the node's, from scontrol; nullopt when SLURM is not
// installed here). kNotFound naming the version and listing the builds there are; without a
// SLURM version, the store's only build, else kFailedPrecondition asking for one.
Result<std::string> ChoosePluginBuild(const std::string& store,
                                      const std::vector<std::string>& required,
                                      const std::optional<std::string>& slurm_version);

// "22.05.8" -> {22, 5, 8}; nullopt when `text` is not three dot-separated numbers.
std::optional<std::vector<int>> ParseSlurmVersion(const std::string& text);

}  // namespace cedana::slurm
