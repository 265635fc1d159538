#include <map>
#include <string>

#include "common/config.h"
#include "fuzz_input.h"

namespace cedana::fuzz {

void RunConfigInput(std::string_view input) {
  // No environment and no flags: only the file's text varies.
  const std::map<std::string, std::string> no_env;
  Result<LoadedConfig> loaded = LoadConfigText(input, "fuzz.json", no_env);
  if (!loaded.has_value()) {
    CEDANA_FUZZ_CHECK(loaded.error().code() == Code::kInvalidArgument);
    return;
  }
  CEDANA_FUZZ_CHECK(loaded->sources.size() == ConfigKeys().size());
  // `cedana version --init-config` writes ConfigToJson; the daemon must load that file back.
  std::string printed = ConfigToJson(loaded->config);
  Result<LoadedConfig> reloaded = LoadConfigText(printed, "printed.json", no_env);
  CEDANA_FUZZ_CHECK(reloaded.has_value());
  CEDANA_FUZZ_CHECK(reloaded->warnings.empty());  // it writes keys of ours only
  CEDANA_FUZZ_CHECK(ConfigToJson(reloaded->config) == printed);
}

}  // namespace cedana::fuzz
