// The SLURM version a plugin file was built for, read from the file itself: the value of its
// exported `plugin_version` (SLURM_VERSION_NUMBER, 0x160508 for 22.05.8), which SLURM compares
// with its own before it loads a job_submit, cli_filter or task plugin. `cedana slurm setup`
// reads it to refuse a build for another version before it changes anything, whichever
// directory the files come from. Parses the ELF file's dynamic symbols; nothing is loaded.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace cedana::slurm {

// 0x160508 -> "22.05.8" (SLURM's spelling: the minor number has two digits).
std::string SlurmVersionString(uint32_t number);

// kNotFound when the file has no `plugin_version`; kInvalidArgument when it is no 64-bit
// little-endian ELF file; errno codes when it cannot be read.
Result<std::string> PluginFileSlurmVersion(const std::string& path);

}  // namespace cedana::slurm
