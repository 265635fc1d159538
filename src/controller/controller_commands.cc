#include "controller/controller_commands.h"

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/config.h"
#include "common/fs.h"
#include "common/log.h"
#include "controller/controller.h"

namespace cedana::controller {
namespace {

Result<Config> LoadSettings() {
  auto env = ProcessEnvironment();
  CEDANA_ASSIGN_OR_RETURN(LoadedConfig loaded, LoadConfig(ConfigPath(env), env));
  for (const std::string& w : loaded.warnings)
    std::fprintf(stderr, "cedana-slurm: warning: %s\n", w.c_str());
  return loaded.config;
}

std::string PidFile(const Config& c) { return c.node.state_dir + "/cedana-slurm.pid"; }

pid_t RunningPid(const Config& c) {
  Result<std::string> text = fs::ReadFile(PidFile(c));
  if (!text.has_value()) return 0;
  pid_t pid = static_cast<pid_t>(std::atoi(text->c_str()));
  return pid > 0 && ::kill(pid, 0) == 0 ? pid : 0;
}

int Status(const Config& c) {
  std::string listen = c.controller.listen;
  size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  httplib::Client client(host, std::stoi(listen.substr(colon + 1)));
  client.set_connection_timeout(3);
  auto res = client.Get("/v1/health");
  if (!res) {
    std::printf("controller: not answering on %s:%s\n", host.c_str(),
                listen.substr(colon + 1).c_str());
    return 1;
  }
  std::printf("controller: %s (pid %d)\n%s\n", res->status == 200 ? "running" : "degraded",
              RunningPid(c), res->body.c_str());
  return res->status == 200 ? 0 : 1;
}

int Stop(const Config& c) {
  pid_t pid = RunningPid(c);
  if (pid == 0) {
    std::printf("controller: not running (no live pid in %s)\n", PidFile(c).c_str());
    return 0;
  }
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (::kill(pid, 0) == 0) {
    std::fprintf(stderr, "cedana-slurm: controller pid %d did not stop within 10 s\n", pid);
    return 1;
  }
  std::printf("controller: stopped (pid %d)\n", pid);
  return 0;
}

int Start(const Config& c) {
  if (pid_t pid = RunningPid(c); pid != 0 && pid != ::getpid()) {
    std::fprintf(stderr, "cedana-slurm: the controller already runs (pid %d)\n", pid);
    return 1;
  }
  log::SetLevel(c.log_level);
  (void)fs::MakeDirs(c.node.state_dir);
  (void)fs::WriteFileAtomic(PidFile(c), std::to_string(::getpid()) + "\n", 0644);
  int code = controller::RunController(c);
  ::unlink(PidFile(c).c_str());
  return code;
}

}  // namespace

int ControllerCommand(const std::string& action) {
  Result<Config> config = LoadSettings();
  if (!config.has_value()) {
    std::fprintf(stderr, "cedana-slurm: error: %s\n", config.error().ToString().c_str());
    return 2;
  }
  if (action == "status") return Status(*config);
  if (action == "stop") return Stop(*config);
  return Start(*config);
}

int CreateToken(const std::string& user, bool admin) {
  Result<Config> config = LoadSettings();
  if (!config.has_value()) {
    std::fprintf(stderr, "cedana-slurm: error: %s\n", config.error().ToString().c_str());
    return 2;
  }
  return controller::CreateTokenCommand(*config, user, admin);
}

}  // namespace cedana::controller
