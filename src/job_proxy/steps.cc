#include "job_proxy/steps.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "common/config.h"
#include "common/fd_relay.h"
#include "common/srun_relay.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "job_proxy/task_process.h"
#include "protocol/client.h"
#include "protocol/daemon_request.h"

namespace cedana::job_proxy {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string SocketPath() {
  auto loaded = LoadConfig(ConfigPath(ProcessEnvironment()), ProcessEnvironment());
  return loaded.has_value() ? loaded->config.socket_path : Config{}.socket_path;
}

// Asks the node daemon, again while it is taking a checkpoint of the job (kAborted): a step
// waits for it rather than going into it half-started.
Result<protocol::Message> Ask(const std::string& socket, const protocol::DaemonRequest& req) {
  for (;;) {
    auto r = protocol::CallDaemon(socket, protocol::EncodeDaemonRequest(req));
    if (r.has_value() || r.error().code() != Code::kAborted) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

[[noreturn]] void Exec(const std::vector<std::string>& argv, std::vector<std::string> env,
                       const std::string& program) {
  ExecTask(argv, std::move(env), program);
  std::fprintf(stderr, "cedana: cannot exec %s: %s\n", program.c_str(), std::strerror(errno));
  ::_exit(127);
}

// The real srun, as without cedana: the relay out of PATH and of the environment.
[[noreturn]] void ExecRealSrun(const std::vector<std::string>& argv) {
  const std::string path = PathWithout(Env("PATH"), Env(std::string(kSrunRelayVar).c_str()));
  std::vector<std::string> env = StartEnvironment({kSrunRelayVar, "PATH"});
  env.push_back("PATH=" + path);
  auto srun = subprocess::FindProgram("srun", path);
  if (!srun.has_value()) {
    std::fprintf(stderr, "cedana: %s\n", srun.error().message().c_str());
    ::_exit(127);
  }
  Exec(argv, std::move(env), *srun);
}

bool IsDevNull(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

// Relays between the keeper's pipes and ours until its status came and its output ended. The
// status, or 1 when the keeper ended without one (killed: its job was stopped by a checkpoint,
// or killed).
int RelayKeeper(UniqueFd in_w, UniqueFd out_r, UniqueFd err_r, UniqueFd status_r) {
  std::string status;
  bool status_done = false;
  bool in_open = in_w.valid();
  for (;;) {
    pollfd p[4] = {{in_open ? STDIN_FILENO : -1, POLLIN, 0},
                   {out_r.get(), POLLIN, 0},
                   {err_r.get(), POLLIN, 0},
                   {status_done ? -1 : status_r.get(), POLLIN, 0}};
    if (!out_r.valid() && !err_r.valid() && status_done) break;
    if (::poll(p, 4, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (in_open && (p[0].revents & (POLLIN | POLLHUP)) &&
        !RelayAvailable(STDIN_FILENO, in_w.get())) {
      in_w.Reset();
      in_open = false;
    }
    if ((p[1].revents & (POLLIN | POLLHUP)) && !RelayAvailable(out_r.get(), STDOUT_FILENO))
      out_r.Reset();
    if ((p[2].revents & (POLLIN | POLLHUP)) && !RelayAvailable(err_r.get(), STDERR_FILENO))
      err_r.Reset();
    if (p[3].revents & (POLLIN | POLLHUP)) {
      char buf[64];
      ssize_t n = ::read(status_r.get(), buf, sizeof buf);
      if (n > 0) status.append(buf, n);
      if (n == 0) status_done = true;
    }
  }
  return status.empty() ? 1 : std::atoi(status.c_str());
}

struct Pipe {
  UniqueFd r, w;
};

Pipe MakePipe() {
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace

void RunSrunRelay(const std::vector<std::string>& argv) {
  Pipe status = MakePipe();
  if (!status.r.valid()) ExecRealSrun(argv);
  protocol::DaemonRequest req = protocol::RequestOf(protocol::DaemonOp::kSrun);
  req.argv = argv;
  req.argv[0] = "srun";
  req.env = StartEnvironment();
  std::error_code ec;
  req.cwd = std::filesystem::current_path(ec).string();
  req.caller_fds = {status.w.get()};
  auto r = Ask(SocketPath(), req);
  if (!r.has_value()) {
    // Outside a cedana workload (kNotFound) srun simply runs; anything else is said first.
    if (r.error().code() != Code::kNotFound)
      std::fprintf(stderr, "cedana: srun runs without its steps being checkpointed: %s\n",
                   r.error().message().c_str());
    ExecRealSrun(argv);
  }
  status.w.Reset();
  // The waiter's layout (common/srun_relay.h).
  const int saved_in = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, kWaiterStdinFd + 1);
  const int saved_status = ::fcntl(status.r.get(), F_DUPFD_CLOEXEC, kWaiterStdinFd + 1);
  if (saved_in < 0 || saved_status < 0 || ::dup2(saved_in, kWaiterStdinFd) != kWaiterStdinFd ||
      ::dup2(saved_status, kWaiterStatusFd) != kWaiterStatusFd)
    ::_exit(1);
  const std::string script(kWaiterScript);
  ::execl("/bin/sh", "sh", "-c", script.c_str(), "srun", static_cast<char*>(nullptr));
  ::_exit(127);
}

int RunStepTask(const std::vector<std::string>& argv) {
  std::vector<std::string> env =
      StartEnvironment({"CEDANA_SLURM_STEP_TASK", "CEDANA_SLURM_ORIG_ARGV0", kStepVar});
  // SIGTERM to a step means its job is being checkpointed (a preemption, scancel, the time limit):
  // the task is in that checkpoint, and this proxy stays to relay it until it is stopped.
  ::signal(SIGTERM, SIG_IGN);
  const bool has_stdin = !IsDevNull(STDIN_FILENO);
  Pipe in = has_stdin ? MakePipe() : Pipe{}, out = MakePipe(), err = MakePipe(),
       status = MakePipe();
  protocol::DaemonRequest req = protocol::RequestOf(protocol::DaemonOp::kStepTask);
  req.step = Env(std::string(kStepVar).c_str());
  req.task = std::atoi(Env("SLURM_PROCID").c_str());
  req.argv = argv;
  req.env = env;
  std::error_code ec;
  req.cwd = std::filesystem::current_path(ec).string();
  req.caller_fds = {in.r.valid() ? in.r.get() : -1, out.w.get(), err.w.get(), status.w.get()};
  auto r = Ask(SocketPath(), req);
  if (!r.has_value()) {
    if (r.error().code() == Code::kFailedPrecondition) return 1;  // its job's processes ended
    std::fprintf(stderr, "cedana: task %d runs without being checkpointed: %s\n", req.task,
                 r.error().message().c_str());
    Exec(argv, env, argv[0]);
  }
  const std::string mode = r->value("mode", "");
  if (mode == "run") Exec(argv, env, argv[0]);
  if (mode == "done") return 0;  // it had ended before the checkpoint this job resumed from
  const pid_t keeper = r->value("pid", 0);
  if (mode == "attach") {
    // The restored keeper's pipes: the supervisor of the restored job holds them open; another
    // end of each is opened here through /proc. A restored task reads no more input.
    const std::vector<int> at = r->value("fds", std::vector<int>{1, 2, 3});
    auto open_end = [&](size_t i) {
      return UniqueFd(i < at.size() ? ::open(fmt::format("/proc/{}/fd/{}", keeper, at[i]).c_str(),
                                             O_RDONLY | O_CLOEXEC)
                                    : -1);
    };
    UniqueFd o = open_end(0), e = open_end(1), s = open_end(2);
    if (!o.valid() || !e.valid() || !s.valid()) {
      std::fprintf(stderr, "cedana: task %d: cannot attach to its restored process %d: %s\n",
                   req.task, keeper, std::strerror(errno));
      return 1;
    }
    return RelayKeeper(UniqueFd(), std::move(o), std::move(e), std::move(s));
  }
  // The keeper has its own copies of its ends.
  in.r.Reset();
  out.w.Reset();
  err.w.Reset();
  status.w.Reset();
  return RelayKeeper(std::move(in.w), std::move(out.r), std::move(err.r), std::move(status.r));
}

}  // namespace cedana::job_proxy
