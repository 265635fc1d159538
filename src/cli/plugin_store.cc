#include "cli/plugin_store.h"

#include <filesystem>

#ifndef CEDANA_PLUGIN_STORE_DIR
#define CEDANA_PLUGIN_STORE_DIR "/usr/local/share/cedana/plugins/slurm"
#endif

namespace cedana::cli {

std::string PluginStore() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = exe.parent_path().parent_path() / "share/cedana/plugins/slurm";
    if (std::filesystem::is_directory(beside, ec)) return beside.string();
  }
  return CEDANA_PLUGIN_STORE_DIR;
}

}  // namespace cedana::cli
