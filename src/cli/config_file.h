// Writing the node's config file: afresh (`--init-config`: defaults and CEDANA_* variables), or
// merged (`--merge-config`: the file's own values, then the variables, written back with every
// key of ours, Cedana's aliases under our names; keys this cedana ignores are kept as they are).
// Mode 0600: the file may hold secrets.
#pragma once

#include <string>

#include "common/config.h"
#include "common/result.h"

namespace cedana::cli {

enum class ConfigWrite { kInit, kMerge };

// Writes `path`; returns the config now in it.
Result<Config> WriteConfigFile(const std::string& path, ConfigWrite how);

}  // namespace cedana::cli
