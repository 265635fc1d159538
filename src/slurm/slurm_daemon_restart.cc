#include "slurm/slurm_daemon_restart.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/fs.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"

namespace cedana::slurm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStopTimeout = std::chrono::seconds(15);
constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kPoll = std::chrono::milliseconds(200);

std::vector<std::string> SplitNul(const std::string& data) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find('\0', pos);
    if (end == std::string::npos) end = data.size();
    out.push_back(data.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// Runs argv (PATH lookup) with `extra_env` added, stdout+stderr kept in `output`; returns the
// exit code.
Result<int> Run(std::vector<std::string> argv, const std::vector<std::string>& extra_env,
                std::string* output) {
  subprocess::Command c;
  c.argv = std::move(argv);
  c.extra_env = extra_env;
  CEDANA_ASSIGN_OR_RETURN(subprocess::Exit exit,
                          subprocess::Run(c, subprocess::Output::kStdoutAndStderr, output));
  return exit.signaled ? 128 + exit.code : exit.code;
}

bool SystemdActive(const std::string& unit) {
  std::string out;
  auto rc = Run({"systemctl", "is-active", unit}, {}, &out);
  return rc.has_value() && *rc == 0 && out.starts_with("active");
}

// A live (not zombie) process.
bool Alive(pid_t pid) {
  auto stat = fs::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.has_value()) return false;
  size_t paren = stat->rfind(')');
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] != 'Z';
}

pid_t ReadPidFile(const std::string& path) {
  auto text = fs::ReadFile(path);
  if (!text.has_value()) return 0;
  try {
    return static_cast<pid_t>(std::stol(*text));
  } catch (...) {
    return 0;
  }
}

// The pid in `pid_file` when it names a live process called `name` (a stale pid file may name
// an unrelated process that reused the pid).
pid_t RunningPid(const std::string& name, const std::string& pid_file) {
  pid_t pid = ReadPidFile(pid_file);
  if (pid <= 0 || !Alive(pid)) return 0;
  auto comm = fs::ReadFile("/proc/" + std::to_string(pid) + "/comm");
  if (!comm.has_value()) return 0;
  std::string c = *comm;
  while (!c.empty() && c.back() == '\n') c.pop_back();
  return c == name ? pid : 0;
}

struct ProcessImage {
  std::string exe;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;
};

Result<ProcessImage> ReadProcessImage(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  ProcessImage img;
  CEDANA_ASSIGN_OR_RETURN(std::string cmdline, fs::ReadFile(proc + "/cmdline"));
  img.argv = SplitNul(cmdline);
  if (img.argv.empty())
    return FailedPreconditionError("empty command line for pid " + std::to_string(pid));
  if (auto environ = fs::ReadFile(proc + "/environ"); environ.has_value())
    img.env = SplitNul(*environ);
  char buf[4096];
  ssize_t n = ::readlink((proc + "/exe").c_str(), buf, sizeof buf - 1);
  if (n < 0) return ErrnoStatus(errno, "reading " + proc + "/exe");
  img.exe.assign(buf, static_cast<size_t>(n));
  constexpr std::string_view kDeleted = " (deleted)";  // the binary was replaced by an upgrade
  if (img.exe.ends_with(kDeleted)) img.exe.resize(img.exe.size() - kDeleted.size());
  // Prefer the path it was started by: /proc/PID/comm comes from that path's name, and it
  // differs from the resolved binary's through symlinks (Debian: slurmd -> slurmd-wlm).
  // A bare name was found through the process's own PATH; /proc/PID/exe covers the rest.
  if (img.argv[0].starts_with("/") && ::access(img.argv[0].c_str(), X_OK) == 0) {
    img.exe = img.argv[0];
  } else if (img.argv[0].find('/') == std::string::npos) {
    std::string path;
    for (const auto& kv : img.env)
      if (kv.starts_with("PATH=")) path = kv.substr(5);
    std::error_code ec;
    for (size_t begin = 0; begin <= path.size();) {
      size_t end = path.find(':', begin);
      if (end == std::string::npos) end = path.size();
      std::string candidate = path.substr(begin, end - begin) + "/" + img.argv[0];
      if (end > begin && std::filesystem::equivalent(candidate, img.exe, ec)) {
        img.exe = candidate;
        break;
      }
      begin = end + 1;
    }
  }
  n = ::readlink((proc + "/cwd").c_str(), buf, sizeof buf - 1);
  img.cwd = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "/";
  return img;
}

// Starts the image detached: a new session, stdio on /dev/null, reparented to init (double
// fork) so that it neither depends on nor becomes a zombie of this CLI process.
Status SpawnDetached(ProcessImage img) {
  std::error_code ec;
  if (!std::filesystem::is_directory(img.cwd, ec)) img.cwd = "/";
  subprocess::Command c;
  c.argv = std::move(img.argv);
  c.program = std::move(img.exe);
  c.env = std::move(img.env);
  c.cwd = std::move(img.cwd);
  c.new_session = true;
  c.detached = true;
  return subprocess::Start(c).error();
}

template <typename Pred>
bool WaitFor(std::chrono::seconds timeout, Pred pred) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(kPoll);
  }
  return pred();
}

bool ControllerUp(const std::string& slurm_conf) {
  std::string out;
  auto rc = Run({"scontrol", "ping"}, {"SLURM_CONF=" + slurm_conf}, &out);
  return rc.has_value() && *rc == 0 && out.find("UP") != std::string::npos;
}

Status WaitUp(const std::string& name, const SlurmDaemonFiles& files, const std::string& pid_file,
              pid_t old_pid) {
  bool up = name == "slurmctld"
                ? WaitFor(kStartTimeout, [&] { return ControllerUp(files.slurm_conf); })
                : WaitFor(kStartTimeout, [&] {
                    pid_t p = RunningPid(name, pid_file);
                    return p > 0 && p != old_pid;
                  });
  if (!up) return DeadlineExceededError(name + " did not come back up within 30 s");
  return OkStatus();
}

// Restarts one daemon; `*ran` says whether it was running here at all.
Status RestartOne(const std::string& name, const std::string& pid_file,
                  const SlurmDaemonFiles& files, std::vector<std::string>* log, bool* ran) {
  *ran = false;
  if (SystemdActive(name)) {
    *ran = true;
    std::string out;
    CEDANA_ASSIGN_OR_RETURN(int rc, Run({"systemctl", "restart", name}, {}, &out));
    if (rc != 0) return UnavailableError("systemctl restart " + name + " failed: " + out);
    log->push_back("restarted " + name + " (systemctl restart " + name + ")");
    return WaitUp(name, files, pid_file, 0);
  }
  pid_t pid = RunningPid(name, pid_file);
  if (pid == 0) return OkStatus();
  *ran = true;
  // Read argv/env before stopping it: /proc/PID is gone afterwards.
  Result<ProcessImage> image = ReadProcessImage(pid);
  if (!image.has_value()) return image.error().WithContext("restarting " + name);
  ProcessImage img = std::move(image).value();
  if (::kill(pid, SIGTERM) != 0) return ErrnoStatus(errno, "signalling " + name);
  if (!WaitFor(kStopTimeout, [&] { return !Alive(pid); }))
    return DeadlineExceededError(name + " (pid " + std::to_string(pid) +
                                 ") did not exit within 15 s of SIGTERM");
  std::string cmd;
  for (const auto& a : img.argv) cmd += (cmd.empty() ? "" : " ") + a;
  CEDANA_RETURN_IF_ERROR(SpawnDetached(std::move(img))) << "starting " << name;
  CEDANA_RETURN_IF_ERROR(WaitUp(name, files, pid_file, pid));
  log->push_back("restarted " + name + " (pid " + std::to_string(pid) + "): " + cmd);
  return OkStatus();
}

}  // namespace

Status RestartSlurmDaemons(const SlurmDaemonFiles& files, std::vector<std::string>* log) {
  // slurmctld first: slurmd registers with it on start.
  bool ctld = false, slurmd = false;
  if (files.restart_slurmctld)
    CEDANA_RETURN_IF_ERROR(RestartOne("slurmctld", files.slurmctld_pid_file, files, log, &ctld));
  if (files.restart_slurmd)
    CEDANA_RETURN_IF_ERROR(RestartOne("slurmd", files.slurmd_pid_file, files, log, &slurmd));
  if (!files.restart_slurmctld && !files.restart_slurmd) {
    log->push_back("no SLURM daemon to restart: this node's role runs neither");
  } else if (!ctld && !slurmd)
    log->push_back("neither slurmctld nor slurmd runs on this node: nothing restarted");
  return OkStatus();
}

}  // namespace cedana::slurm
