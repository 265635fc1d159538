// The local plugin store `cedana plugin install` copies from and `cedana check` looks into: the
// one beside this binary (<prefix>/bin/cedana -> <prefix>/share/cedana/plugins/slurm), so that a
// bundle unpacked under another prefix by the web installer finds its own plugins; else the
// store this build was configured with (CEDANA_PLUGIN_STORE_DIR). It holds one build per SLURM
// version (src/slurm/plugin_builds.h).
#pragma once

#include <string>

namespace cedana::cli {

std::string PluginStore();

// <prefix>/<relative> for this binary's <prefix>/bin/cedana (where cmake --install put what came
// with it); "" when /proc/self/exe cannot be read.
std::string BesideThisBinary(const std::string& relative);

}  // namespace cedana::cli
