// `cedana version [--init-config]` and `cedana config show`.
#include <filesystem>

#include "cli/cli_context.h"
#include "cli/config_file.h"
#include "common/fs.h"
#include "common/system_names.h"
#include "common/version.h"
#include "protocol/controller_client.h"

namespace cedana::cli {
void AddVersionCommand(CLI::App& app, CliContext& ctx) {
  auto* init = &ctx.Keep<bool>(false);
  auto* version =
      app.add_subcommand("version", "Print the version; --init-config writes the config");
  version->add_flag("--init-config", *init,
                    "Write /etc/cedana/config.json from defaults and CEDANA_* variables");
  version->callback([&ctx, init] {
    std::printf("cedana %s\n", kVersion);
    if (!*init) return;
    std::string path = ConfigPath(ProcessEnvironment());
    Result<Config> written = WriteConfigFile(path, ConfigWrite::kInit);
    if (!written.has_value()) {
      ctx.Fail(written.error());
      return;
    }
    std::printf("wrote %s\n", path.c_str());
    const Config& c = *written;
    if (c.url.empty() || c.auth_token.empty()) return;
    // The seeds' step "on all nodes, cedana version --init-config" also makes the node known
    // to the controller; a controller that is down is not fatal (the daemon registers later).
    std::string node = NodeName(c);
    protocol::ControllerClient client(c.url, c.auth_token);
    Result<nlohmann::json> r =
        client.Post("/agent/register", {{"node", node}, {"version", kVersion}});
    if (r.has_value()) {
      std::printf("registered node %s with the controller at %s\n", node.c_str(), c.url.c_str());
    } else {
      std::fprintf(stderr, "cedana: warning: could not register with the controller: %s\n",
                   r.error().ToString().c_str());
    }
  });
}

void AddConfigCommand(CLI::App& app, CliContext& ctx) {
  auto* config = app.add_subcommand("config", "Inspect the configuration");
  config->require_subcommand(1);
  auto* show = config->add_subcommand("show", "Print the effective configuration and its sources");
  show->callback([&ctx] {
    const auto& loaded = ctx.loaded();
    if (!loaded.has_value()) {
      ctx.Fail(loaded.error());
      return;
    }
    std::printf("# config file: %s\n", ConfigPath(ProcessEnvironment()).c_str());
    std::printf("%-26s %-42s %s\n", "KEY", "VALUE", "SOURCE");
    for (const auto& s : loaded->sources)
      std::printf("%-26s %-42s %s\n", s.key.c_str(), s.value.empty() ? "\"\"" : s.value.c_str(),
                  s.origin.c_str());
    for (const std::string& w : loaded->warnings) std::printf("# warning: %s\n", w.c_str());
  });
}

}  // namespace cedana::cli
