#include "cli/plugin_store.h"

#include <filesystem>

#ifndef CEDANA_PLUGIN_STORE_DIR
#define CEDANA_PLUGIN_STORE_DIR "/usr/local/share/cedana/plugins/slurm"
#endif

namespace cedana::cli {

std::string BesideThisBinary(const std::string& relative) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (exe.parent_path().parent_path() / relative).string();
}

std::string PluginStore() {
  std::string beside = BesideThisBinary("share/cedana/plugins/slurm");
  std::error_code ec;
  if (!beside.empty() && std::filesystem::is_directory(beside, ec)) return beside;
  return CEDANA_PLUGIN_STORE_DIR;
}

}  // namespace cedana::cli
