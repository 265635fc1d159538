// CliContext: what every `cedana` command shares: the loaded configuration, the daemon call
// with a progress display, and error printing. One per process; not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/config.h"
#include "protocol/client.h"
#include "protocol/daemon_reply.h"
#include "protocol/daemon_request.h"

namespace cedana::cli {

class CliContext {
 public:
  // Loads the config (file + environment); a bad config is reported when first needed.
  CliContext();

  const Result<LoadedConfig>& loaded() const { return loaded_; }
  // Reads the config again (after --init-config or --merge-config wrote it).
  void ReloadConfig();
  // The config file's ignored keys, one warning line each on stderr: for the services at start
  // (their stderr is their log); other commands stay quiet about them.
  void ReportConfigWarnings() const;
  // The config; nullptr after printing the config error (exit_code() is then 2).
  const Config* config();

  // A value that lives as long as the context: where a command's options are parsed into, for
  // its callback to read.
  template <typename T, typename... Args>
  T& Keep(Args&&... args) {
    auto kept = std::make_shared<T>(std::forward<Args>(args)...);
    T& ref = *kept;
    kept_.push_back(std::move(kept));
    return ref;
  }
  // Calls the daemon, showing progress on a terminal; prints the error and returns nullopt on
  // failure (exit_code() then says how to exit).
  std::optional<protocol::Message> Call(const protocol::DaemonRequest& request,
                                        bool show_progress = true);
  // Call, then the reply in its typed form (protocol/daemon_reply.h): a reply that does not
  // parse fails the command as a refused call does.
  template <typename Reply>
  std::optional<Reply> Call(const protocol::DaemonRequest& request,
                            Result<Reply> (*parse)(const protocol::Message&),
                            bool show_progress = true) {
    std::optional<protocol::Message> reply = Call(request, show_progress);
    if (!reply) return std::nullopt;
    Result<Reply> typed = parse(*reply);
    if (!typed.has_value()) {
      Fail(typed.error().WithContext("reading the node daemon's reply"));
      return std::nullopt;
    }
    return std::move(typed).value();
  }
  // Calls the daemon without a word: the reply, or the error (a bad config's too).
  Result<protocol::Message> Ask(const protocol::DaemonRequest& request) const;
  template <typename Reply>
  Result<Reply> Ask(const protocol::DaemonRequest& request,
                    Result<Reply> (*parse)(const protocol::Message&)) const {
    if (!loaded_.has_value()) return loaded_.error();
    return protocol::CallDaemon(loaded_->config.socket_path, request, parse);
  }

  void Fail(const Status& status);
  int exit_code() const { return exit_code_; }
  void set_exit_code(int code) { exit_code_ = code; }

 private:
  Result<LoadedConfig> loaded_;
  int exit_code_ = 0;
  std::vector<std::shared_ptr<void>> kept_;
};

// Each command file adds its subcommand to the app.
void AddDaemonCommand(CLI::App& app, CliContext& ctx);
void AddShimCommand(CLI::App& app, CliContext& ctx);
void AddRunCommand(CLI::App& app, CliContext& ctx);
void AddDumpCommand(CLI::App& app, CliContext& ctx);
void AddRestoreCommand(CLI::App& app, CliContext& ctx);
void AddPsCommand(CLI::App& app, CliContext& ctx);
void AddKillCommand(CLI::App& app, CliContext& ctx);
void AddCheckpointsCommand(CLI::App& app, CliContext& ctx);
void AddVersionCommand(CLI::App& app, CliContext& ctx);
void AddConfigCommand(CLI::App& app, CliContext& ctx);
void AddPluginCommand(CLI::App& app, CliContext& ctx);
void AddSlurmCommand(CLI::App& app, CliContext& ctx);
void AddCheckCommand(CLI::App& app, CliContext& ctx);
void AddDaemonCheckCommand(CLI::App& daemon, CliContext& ctx);

// Human-friendly helpers for command output.
std::string HumanBytes(uint64_t bytes);
std::string HumanTime(int64_t unix_ms);
// Prints workload output from `path`, starting at byte `offset`, until the workload `id` ends;
// returns its exit code (for --attach).
int FollowWorkload(CliContext& ctx, const std::string& id, const std::string& path, off_t offset);
// The size of `path` now (0 if missing): where a workload about to append to it starts.
off_t FileSize(const std::string& path);

}  // namespace cedana::cli
