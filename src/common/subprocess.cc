#include "common/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "common/unique_fd.h"

extern char** environ;

namespace cedana::subprocess {
namespace {

// The soft RLIMIT_NOFILE programs are started with, once RaiseOwnFileLimit raised ours; else -1.
std::atomic<int64_t> g_started_file_limit{-1};

// glibc's execvp default when the environment has no PATH.
constexpr const char* kDefaultPath = "/bin:/usr/bin";

// What the child tells the parent over the close-on-exec pipe: the detached program's pid, or
// the step that failed and its errno. Smaller than PIPE_BUF, so each write is atomic.
enum class ChildStep : int32_t {
  kPid,  // not a failure: `pid` is the detached program's
  kFork,
  kSession,
  kCgroup,
  kNamespace,
  kLimits,
  kFds,
  kGroups,
  kGid,
  kUid,
  kCwd,
  kExec,
};

struct ChildReport {
  ChildStep step;
  int32_t err;
  int32_t pid;  // kPid only
};

// Everything the child reads, built before the fork.
struct Plan {
  const Command* command = nullptr;
  std::string program;
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp, shell_argv;
  std::vector<int> moved;       // where each fds[i].second is copied first, above every fd named
  std::vector<bool> is_target;  // indexed by child fd, 0..max_target
  int high = 3;                 // the first fd above every fd named
  int devnull = -1;
  int report = -1;  // write end of the report pipe
};

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

std::vector<std::string> Environment(const Command& c) {
  std::vector<std::string> env;
  if (c.env) env = *c.env;
  else
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& kv : c.extra_env) {
    std::string key = kv.substr(0, kv.find('=') + 1);
    auto same = std::find_if(env.begin(), env.end(),
                             [&](const std::string& e) { return e.starts_with(key); });
    if (same != env.end()) *same = kv;
    else env.push_back(kv);
  }
  return env;
}

std::string PathOf(const std::vector<std::string>& env) {
  for (const std::string& kv : env)
    if (kv.starts_with("PATH=")) return kv.substr(5);
  return kDefaultPath;
}

[[noreturn]] void Fail(const Plan& plan, ChildStep step) {
  ChildReport r{step, errno, 0};
  if (::write(plan.report, &r, sizeof r) < 0) {
  }
  ::_exit(127);
}

// The fds of the program: each named one at its number, 0..2 on /dev/null otherwise, the rest
// close-on-exec. Sources are copied above every named fd first, so that placing one cannot
// overwrite another's source.
void LayOutFds(Plan& plan) {
  const auto& fds = plan.command->fds;
  for (size_t i = 0; i < fds.size(); ++i) {
    plan.moved[i] = ::fcntl(fds[i].second, F_DUPFD_CLOEXEC, plan.high);
    if (plan.moved[i] < 0) Fail(plan, ChildStep::kFds);
  }
  for (int fd = 0; fd < 3; ++fd)
    if (::dup2(plan.devnull, fd) < 0) Fail(plan, ChildStep::kFds);
  for (size_t i = 0; i < fds.size(); ++i)
    if (::dup2(plan.moved[i], fds[i].first) < 0) Fail(plan, ChildStep::kFds);
  for (int fd = 0; fd < static_cast<int>(plan.is_target.size()); ++fd)
    if (!plan.is_target[fd]) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ::close_range(static_cast<unsigned>(plan.is_target.size()), ~0U, CLOSE_RANGE_CLOEXEC);
}

void ResetSignals(const Command& c) {
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  for (int sig : c.ignored_signals) ::signal(sig, SIG_IGN);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Our pid in the node's namespace, from the node's /proc (which this child still sees after it
// joined another PID namespace, where getpid() gives its pid there). 0 if unreadable.
pid_t NodePid() {
  char buf[32];
  ssize_t n = ::readlink("/proc/self", buf, sizeof buf - 1);
  if (n <= 0) return 0;
  pid_t pid = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] < '0' || buf[i] > '9') return 0;
    pid = pid * 10 + (buf[i] - '0');
  }
  return pid;
}

// Into the namespaces of another process's tree: this child stays outside (setns changes the
// PID namespace of children only); its child inside forks the program and exits at once, so the
// program's parent becomes that namespace's init. The program reports its node pid itself.
void JoinNamespaces(Plan& plan) {
  const Command& c = *plan.command;
  if (::setns(c.join_namespaces_of, CLONE_NEWPID | CLONE_NEWIPC) != 0)
    Fail(plan, ChildStep::kNamespace);
  pid_t inside = ::fork();
  if (inside < 0) Fail(plan, ChildStep::kFork);
  if (inside > 0) {
    int st = 0;
    while (::waitpid(inside, &st, 0) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  pid_t program = ::fork();
  if (program < 0) Fail(plan, ChildStep::kFork);
  if (program > 0) ::_exit(0);
  ChildReport r{ChildStep::kPid, 0, static_cast<int32_t>(NodePid())};
  if (r.pid == 0) Fail(plan, ChildStep::kNamespace);
  if (::write(plan.report, &r, sizeof r) < 0) {
  }
}

// The child, from the fork to execve. Only async-signal-safe calls.
[[noreturn]] void RunChild(Plan& plan) {
  const Command& c = *plan.command;
  for (int fd : c.cgroup_procs)
    if (::write(fd, "0", 1) != 1) Fail(plan, ChildStep::kCgroup);
  if (int64_t soft = g_started_file_limit.load(); soft >= 0) {
    rlimit l{};
    if (::getrlimit(RLIMIT_NOFILE, &l) != 0) Fail(plan, ChildStep::kLimits);
    l.rlim_cur = std::min<rlim_t>(static_cast<rlim_t>(soft), l.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &l) != 0) Fail(plan, ChildStep::kLimits);
  }
  for (const auto& [resource, values] : c.rlimits) {
    rlimit l{values.first, values.second};
    if (::setrlimit(resource, &l) != 0) Fail(plan, ChildStep::kLimits);
  }
  if (c.join_namespaces_of >= 0) JoinNamespaces(plan);
  if (c.new_session && ::setsid() < 0) Fail(plan, ChildStep::kSession);
  if (c.detached) {
    pid_t pid = ::fork();
    if (pid < 0) Fail(plan, ChildStep::kFork);
    if (pid > 0) {
      ChildReport r{ChildStep::kPid, 0, static_cast<int32_t>(pid)};
      if (::write(plan.report, &r, sizeof r) < 0) {
      }
      ::_exit(0);
    }
  }
  plan.report = ::fcntl(plan.report, F_DUPFD_CLOEXEC, plan.high);
  if (plan.report < 0) ::_exit(127);
  LayOutFds(plan);
  ResetSignals(c);
  if (c.identity) {
    if (::setgroups(c.identity->groups.size(), c.identity->groups.data()) != 0)
      Fail(plan, ChildStep::kGroups);
    if (::setgid(c.identity->gid) != 0) Fail(plan, ChildStep::kGid);
    if (::setuid(c.identity->uid) != 0) Fail(plan, ChildStep::kUid);
  }
  if (!c.cwd.empty() && ::chdir(c.cwd.c_str()) != 0) Fail(plan, ChildStep::kCwd);
  ::execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  // A script without "#!": what execvp and a shell do, run it with /bin/sh.
  if (errno == ENOEXEC) ::execve("/bin/sh", plan.shell_argv.data(), plan.envp.data());
  Fail(plan, ChildStep::kExec);
}

Status FailureOf(const Command& c, const std::string& program, const ChildReport& r) {
  switch (r.step) {
    case ChildStep::kFork: return ErrnoStatus(r.err, "forking " + program + " off to run detached");
    case ChildStep::kSession: return ErrnoStatus(r.err, "starting a session for " + program);
    case ChildStep::kCgroup: return ErrnoStatus(r.err, "moving " + program + " into its cgroups");
    case ChildStep::kNamespace:
      return ErrnoStatus(r.err, "joining the PID and IPC namespaces for " + program);
    case ChildStep::kLimits: return ErrnoStatus(r.err, "setting the resource limits of " + program);
    case ChildStep::kFds:
      return ErrnoStatus(r.err, "setting up the file descriptors of " + program);
    case ChildStep::kGroups:
      return ErrnoStatus(r.err, fmt::format("setting the {} supplementary groups of {}",
                                            c.identity->groups.size(), program));
    case ChildStep::kGid:
      return ErrnoStatus(r.err, fmt::format("switching {} to gid {}", program, c.identity->gid));
    case ChildStep::kUid:
      return ErrnoStatus(r.err, fmt::format("switching {} to uid {}", program, c.identity->uid));
    case ChildStep::kCwd:
      return ErrnoStatus(r.err, fmt::format("changing {}'s directory to {}", program, c.cwd));
    case ChildStep::kExec: return ErrnoStatus(r.err, "executing " + program);
    case ChildStep::kPid: break;
  }
  return InternalError(
      fmt::format("starting {}: unknown report {}", program, static_cast<int>(r.step)));
}

// Fills `plan` in place: its pointer arrays point into its own strings.
Status Prepare(const Command& c, Plan& plan) {
  if (c.argv.empty() || c.argv[0].empty())
    return InvalidArgumentError("starting a program: empty command");
  if (c.detached && c.namespaces != 0)
    return InvalidArgumentError("starting " + c.argv[0] +
                                ": a detached program cannot get namespaces");
  if (c.join_namespaces_of >= 0 && (c.detached || c.namespaces != 0))
    return InvalidArgumentError(
        "starting " + c.argv[0] +
        ": a program joining namespaces is neither detached nor given new ones");
  plan.command = &c;
  plan.args = c.argv;
  plan.env = Environment(c);
  CEDANA_ASSIGN_OR_RETURN(plan.program,
                          FindProgram(c.program.empty() ? c.argv[0] : c.program, PathOf(plan.env)));
  plan.argv = Pointers(plan.args);
  plan.envp = Pointers(plan.env);
  plan.shell_argv = {const_cast<char*>("/bin/sh"), plan.program.data()};
  plan.shell_argv.insert(plan.shell_argv.end(), plan.argv.begin() + 1, plan.argv.end());
  plan.moved.resize(c.fds.size(), -1);
  int max_target = 2;
  for (int fd : c.cgroup_procs) plan.high = std::max(plan.high, fd + 1);
  for (auto [target, source] : c.fds) {
    if (target < 0 || source < 0)
      return InvalidArgumentError(
          fmt::format("starting {}: fd {} from {}", c.argv[0], target, source));
    max_target = std::max(max_target, target);
    plan.high = std::max({plan.high, target + 1, source + 1});
  }
  plan.is_target.assign(max_target + 1, false);
  for (int fd = 0; fd < 3; ++fd) plan.is_target[fd] = true;
  for (auto [target, source] : c.fds) plan.is_target[target] = true;
  return OkStatus();
}

}  // namespace

std::string Exit::Describe() const {
  if (!signaled) return fmt::format("exited with code {}", code);
  const char* name = ::sigabbrev_np(code);
  return name ? fmt::format("killed by signal {} (SIG{})", code, name)
              : fmt::format("killed by signal {}", code);
}

Result<std::string> FindProgram(const std::string& name, const std::string& path_list) {
  if (name.empty()) return InvalidArgumentError("no program named");
  if (name.find('/') != std::string::npos) return name;
  for (size_t begin = 0; begin <= path_list.size();) {
    size_t end = std::min(path_list.find(':', begin), path_list.size());
    if (end > begin) {
      std::string candidate = path_list.substr(begin, end - begin) + "/" + name;
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0)
        return candidate;
    }
    begin = end + 1;
  }
  return NotFoundError(fmt::format("{}: no such program on PATH ({})", name, path_list));
}

Result<pid_t> Start(const Command& command) {
  Plan plan;
  CEDANA_RETURN_IF_ERROR(Prepare(command, plan));
  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull.valid()) return ErrnoStatus(errno, "opening /dev/null");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "creating a report pipe");
  UniqueFd report_r(pipe_fds[0]), report_w(pipe_fds[1]);
  plan.devnull = devnull.get();
  plan.report = report_w.get();
  plan.high = std::max({plan.high, plan.devnull + 1, plan.report + 1});

  pid_t pid =
      command.namespaces == 0
          ? ::fork()
          : static_cast<pid_t>(::syscall(SYS_clone, command.namespaces | SIGCHLD, 0, 0, 0, 0));
  if (pid < 0) return ErrnoStatus(errno, "starting " + plan.program);
  if (pid == 0) RunChild(plan);
  report_w.Reset();

  pid_t program_pid = pid;
  // The intermediate child of a detached program reports the program's pid and exits at once;
  // so does the one that joins namespaces, once its child inside has forked the program.
  const bool intermediate = command.detached || command.join_namespaces_of >= 0;
  if (intermediate) CEDANA_RETURN_IF_ERROR(Wait(pid));
  for (;;) {
    ChildReport r{};
    ssize_t n = ::read(report_r.get(), &r, sizeof r);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return program_pid;  // exec'd: the pipe closed with it
    if (n != sizeof r)
      return InternalError("starting " + plan.program + ": short report from the child");
    if (r.step == ChildStep::kPid) {
      program_pid = r.pid;
      continue;
    }
    if (!intermediate) (void)Wait(pid);
    return FailureOf(command, plan.program, r);
  }
}

Result<Exit> Wait(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return ErrnoStatus(errno, fmt::format("waiting for process {}", pid));
  if (WIFSIGNALED(status)) return Exit{true, WTERMSIG(status)};
  return Exit{false, WEXITSTATUS(status)};
}

Result<Exit> Run(const Command& command, Output keep, std::string* output) {
  if (keep == Output::kDiscard || output == nullptr) {
    CEDANA_ASSIGN_OR_RETURN(pid_t pid, Start(command));
    return Wait(pid);
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "creating an output pipe");
  UniqueFd out_r(pipe_fds[0]), out_w(pipe_fds[1]);
  Command with_pipe = command;
  with_pipe.fds.emplace_back(STDOUT_FILENO, out_w.get());
  if (keep == Output::kStdoutAndStderr) with_pipe.fds.emplace_back(STDERR_FILENO, out_w.get());
  CEDANA_ASSIGN_OR_RETURN(pid_t pid, Start(with_pipe));
  out_w.Reset();
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(out_r.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output->append(buf, static_cast<size_t>(n));
  }
  return Wait(pid);
}

Status RaiseOwnFileLimit() {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) != 0) return ErrnoStatus(errno, "reading RLIMIT_NOFILE");
  if (l.rlim_cur == l.rlim_max) return OkStatus();
  int64_t expected = -1;
  g_started_file_limit.compare_exchange_strong(expected, static_cast<int64_t>(l.rlim_cur));
  l.rlim_cur = l.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &l) != 0) return ErrnoStatus(errno, "raising RLIMIT_NOFILE");
  return OkStatus();
}

Result<pid_t> ForkRunning(int (*body)()) {
  pid_t pid = ::fork();
  if (pid < 0) return ErrnoStatus(errno, "fork");
  if (pid == 0) ::_exit(body());
  return pid;
}

}  // namespace cedana::subprocess
