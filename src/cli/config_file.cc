#include "cli/config_file.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/bounded_json.h"
#include "common/cedana_config_compat.h"
#include "common/fs.h"

namespace cedana::cli {
namespace {

// Removes "a.b" from `j` ({"a": {"b": ...}}), and "a" when that leaves it empty.
void EraseDotted(nlohmann::json* j, const std::string& key) {
  size_t dot = key.find('.');
  if (dot == std::string::npos) {
    j->erase(key);
    return;
  }
  auto it = j->find(key.substr(0, dot));
  if (it == j->end() || !it->is_object()) return;
  it->erase(key.substr(dot + 1));
  if (it->empty()) j->erase(it);
}

}  // namespace

Result<Config> WriteConfigFile(const std::string& path, ConfigWrite how) {
  // Afresh: defaults and the environment only.
  CEDANA_ASSIGN_OR_RETURN(
      LoadedConfig loaded,
      LoadConfig(how == ConfigWrite::kInit ? "/nonexistent" : path, ProcessEnvironment()));
  nlohmann::json file = nlohmann::json::object();
  if (how == ConfigWrite::kMerge && fs::Exists(path)) {
    CEDANA_ASSIGN_OR_RETURN(std::string text, fs::ReadFile(path));
    CEDANA_ASSIGN_OR_RETURN(file, ParseBoundedJson(text));
  }
  CEDANA_ASSIGN_OR_RETURN(nlohmann::json ours, ParseBoundedJson(ConfigToJson(loaded.config)));
  // Cedana's names of our keys go: the value now stands under our name.
  for (const CedanaKeyAlias& a : CedanaKeyAliases()) EraseDotted(&file, std::string(a.theirs));
  file.merge_patch(ours);
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(std::filesystem::path(path).parent_path().string(), 0755));
  CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(path, file.dump(2) + "\n", 0600))
      << "writing " << path;
  return loaded.config;
}

}  // namespace cedana::cli
