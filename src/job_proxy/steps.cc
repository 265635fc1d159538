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
#include "protocol/daemon_reply.h"
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
  bool status_done = !status_r.valid();
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

// FIFOs the supervisor of a task's workload writes its output into: an output path it may open
// (it refuses links, such as /proc/<pid>/fd/<n>), in a directory only this user can enter. A
// write end of each is held here until the supervisor has its own, so that no end-of-file comes
// before it.
struct OutputFifos {
  std::string dir;
  UniqueFd out_r, err_r, out_w, err_w;
  std::string Out() const { return dir + "/stdout"; }
  std::string Err() const { return dir + "/stderr"; }
};

Result<OutputFifos> MakeOutputFifos() {
  OutputFifos f;
  std::string tmpl = "/tmp/cedana-task-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoStatus(errno, "making a directory in /tmp");
  f.dir = tmpl;
  for (const std::string& path : {f.Out(), f.Err()})
    if (::mkfifo(path.c_str(), 0600) != 0) return ErrnoStatus(errno, "making FIFO " + path);
  auto open_both = [](const std::string& path, UniqueFd* r, UniqueFd* w) -> Status {
    r->Reset(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    w->Reset(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (!r->valid() || !w->valid()) return ErrnoStatus(errno, "opening FIFO " + path);
    ::fcntl(r->get(), F_SETFL, ::fcntl(r->get(), F_GETFL) & ~O_NONBLOCK);
    return OkStatus();
  };
  CEDANA_RETURN_IF_ERROR(open_both(f.Out(), &f.out_r, &f.out_w));
  CEDANA_RETURN_IF_ERROR(open_both(f.Err(), &f.err_r, &f.err_w));
  return f;
}

void RemoveOutputFifos(const OutputFifos& f) {
  ::unlink(f.Out().c_str());
  ::unlink(f.Err().c_str());
  ::rmdir(f.dir.c_str());
}

// A task on another node than its batch script's: a workload of its own (daemon/step_parts.h),
// or, when the step resumes, its part of the job's checkpoint restored. Its output comes through
// FIFOs; its exit code is the workload's.
int RunTaskWorkload(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    int rank) {
  Result<OutputFifos> fifos = MakeOutputFifos();
  if (!fifos.has_value()) {
    std::fprintf(stderr, "cedana: task %d runs without being checkpointed: %s\n", rank,
                 fifos.error().message().c_str());
    Exec(argv, env, argv[0]);
  }
  const std::string job = Env("SLURM_JOB_ID");
  const std::string part = StepPartOfRank(Env(std::string(kStepPartsVar).c_str()), rank);
  protocol::DaemonRequest req;
  if (const size_t slash = part.find('/'); slash != std::string::npos) {
    req = protocol::RequestOf(protocol::DaemonOp::kRestore);
    req.checkpoint_id = part.substr(slash + 1);
  } else {
    req = protocol::RequestOf(protocol::DaemonOp::kRun);
    req.argv = argv;
    req.env = env;
    std::error_code ec;
    req.cwd = std::filesystem::current_path(ec).string();
    const std::string job_label = Env("CEDANA_CHECKPOINT");
    req.label = StepPartLabel(job_label.empty() ? "job-" + job : job_label,
                              Env(std::string(kStepVar).c_str()), rank);
  }
  req.job_id = job;
  req.owner_pid = ::getpid();
  req.stdout_path = fifos->Out();
  req.stderr_path = fifos->Err();
  const std::string socket = SocketPath();
  auto r = Ask(socket, req);
  RemoveOutputFifos(*fifos);
  Result<protocol::StartedWorkload> w = r.has_value()
                                            ? protocol::ParseStartedWorkload(*r)
                                            : Result<protocol::StartedWorkload>(r.error());
  if (!w.has_value()) {
    if (!part.empty()) {
      // Started afresh it would redo what its checkpoint holds: the step fails instead.
      std::fprintf(stderr, "cedana: task %d cannot resume from checkpoint %s: %s\n", rank,
                   part.c_str(), w.error().message().c_str());
      return 1;
    }
    std::fprintf(stderr, "cedana: task %d runs without being checkpointed: %s\n", rank,
                 w.error().message().c_str());
    Exec(argv, env, argv[0]);
  }
  fifos->out_w.Reset();
  fifos->err_w.Reset();
  (void)RelayKeeper(UniqueFd(), std::move(fifos->out_r), std::move(fifos->err_r), UniqueFd());
  // Its output ended with it (or with its supervisor): its record says how.
  for (int i = 0; i < 100; ++i) {
    auto info =
        protocol::CallDaemon(socket, protocol::RequestOf(protocol::DaemonOp::kInspect, w->id),
                             protocol::ParseInspectReply);
    if (info.has_value() && (info->status == "exited" || info->status == "failed"))
      return info->exit_code;
    // Stopped by the job's checkpoint: the job ends, and this task resumes with it.
    if (info.has_value() && info->status == "checkpointed") return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "cedana: task %d: its workload %s did not report its end\n", rank,
               w->id.c_str());
  return 1;
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
  if (mode == "workload") return RunTaskWorkload(argv, env, req.task);
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
