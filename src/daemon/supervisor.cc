#include "daemon/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "common/fd_relay.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "daemon/caller_files.h"
#include "daemon/cgroup_join.h"
#include "engine/criu_client.h"
#include "engine/process_tree.h"
#include "protocol/wire.h"

namespace cedana::daemon {
namespace {

using nlohmann::json;

// What the daemon waits for on the report pipe.
void Report(int fd, const Status& status, pid_t pid) {
  json j = status.ok() ? json{{"ok", true}, {"pid", pid}, {"supervisor_pid", ::getpid()}}
                       : protocol::ErrorResult(status);
  std::string line = j.dump() + "\n";
  if (::write(fd, line.data(), line.size()) < 0) {
    // The daemon gave up waiting; state.json still tells the outcome.
  }
  ::close(fd);
}

// The workload's output file. The default one in the daemon's own record dir is created by
// root and given to the user; any other path comes from the request and is opened with the
// user's identity (caller_files.h), so root never writes where the user could not.
Result<UniqueFd> OpenOutput(const std::string& path, const WorkloadSpec& spec,
                            const std::string& record_dir) {
  if (path.rfind(record_dir + "/", 0) != 0 || path.find("/../") != std::string::npos)
    return OpenOutputAs(path, spec.uid, spec.gid);
  bool existed = fs::Exists(path);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                     kOutputFileMode));
  if (!fd.valid()) return ErrnoStatus(errno, "opening output file " + path);
  if (!existed && ::fchown(fd.get(), spec.uid, spec.gid) != 0) {
    // Not fatal: root-squashed NFS refuses chown; the file stays readable.
  }
  return fd;
}

struct Pipes {
  UniqueFd out_r, out_w, err_r, err_w;
};

Result<Pipes> MakePipes() {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return ErrnoStatus(errno, "creating stdout pipe");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return ErrnoStatus(errno, "creating stderr pipe");
  }
  return Pipes{UniqueFd(out[0]), UniqueFd(out[1]), UniqueFd(err[0]), UniqueFd(err[1])};
}

// Starts argv as the init of a new PID namespace and session leader in it (CRIU needs the
// session leader inside the namespace it dumps). In unprivileged mode the workload stays in the
// node's PID namespace, still as a session leader: CRIU running as the owner cannot create a
// PID namespace at restore; it gets the dumped pids back with clone3(set_tid) instead, which
// CAP_CHECKPOINT_RESTORE allows (and which fails if another process took one of them meanwhile).
Result<pid_t> StartWorkload(const WorkloadSpec& spec, Pipes& pipes) {
  if (spec.argv.empty()) return InvalidArgumentError("empty command");
  // Its own PID namespace, so that a restore gets the same pids wherever it runs, and its own
  // IPC namespace, because CRIU dumps SysV shared memory, semaphores and message queues only
  // as a whole namespace (MPI libraries share memory between ranks that way). Only stdin (on
  // /dev/null), stdout and stderr reach it, and a fresh program's signals: a job that handles
  // SIGTERM (scancel, a time limit) must see it.
  subprocess::Command c;
  c.argv = spec.argv;
  c.env = spec.env;
  c.fds = {{STDOUT_FILENO, pipes.out_w.get()}, {STDERR_FILENO, pipes.err_w.get()}};
  c.identity = subprocess::Identity{spec.uid, spec.gid, spec.groups};
  c.cwd = spec.cwd;
  c.new_session = true;
  if (!spec.unprivileged) c.namespaces = CLONE_NEWPID | CLONE_NEWIPC;
  Result<pid_t> pid = subprocess::Start(c);
  if (!pid.has_value())
    return InvalidArgumentError("starting the workload: " + pid.error().message());
  return *pid;
}

// New pipes for the restored srun steps' pipes whose other end was outside the tree
// (WorkloadSpec::step_pipes): the tree's ends go to CRIU, the outer ends into `outer`, which
// the supervisor keeps open while it runs.
Result<std::vector<UniqueFd>> StepPipeEnds(const WorkloadSpec& spec, std::vector<UniqueFd>* outer,
                                           engine::RestoreRequest* req) {
  std::vector<UniqueFd> tree_ends;
  for (const StepPipe& p : spec.step_pipes) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "creating a step's pipe");
    UniqueFd r(fds[0]), w(fds[1]);
    // The job's new task proxy opens its end through /proc/<keeper>/fd, which the pipe inode's
    // owner and mode (root, 0600) would refuse to the job's user.
    if (::fchown(r.get(), spec.uid, spec.gid) != 0)
      return ErrnoStatus(errno, "giving a step's pipe to the workload's owner");
    UniqueFd& tree_end = p.tree_reads ? r : w;
    req->inherit_fds.emplace_back(fmt::format("pipe:[{}]", p.ino), tree_end.get());
    tree_ends.push_back(std::move(tree_end));
    outer->push_back(std::move(p.tree_reads ? w : r));
  }
  return tree_ends;
}

Result<pid_t> RestoreWithCriu(const WorkloadSpec& spec, Pipes& pipes,
                              std::vector<UniqueFd>* step_outer_ends) {
  engine::CriuSettings settings{spec.criu_binary, std::chrono::seconds(spec.criu_timeout_seconds),
                                spec.criu_no_breakpoints};
  // The daemon checked this binary at its start (and resolved its path).
  const engine::CriuClient criu = engine::CriuClient::OfCheckedBinary(settings);
  engine::RestoreRequest req;
  req.images_dir = spec.images_dir;
  // The workload wrote to pipes; reconnect its ends to the new pipes of this attempt.
  if (spec.dumped_stdout_ino != 0)
    req.inherit_fds.emplace_back(fmt::format("pipe:[{}]", spec.dumped_stdout_ino),
                                 pipes.out_w.get());
  if (spec.dumped_stderr_ino != 0)
    req.inherit_fds.emplace_back(fmt::format("pipe:[{}]", spec.dumped_stderr_ino),
                                 pipes.err_w.get());
  CEDANA_ASSIGN_OR_RETURN(std::vector<UniqueFd> step_tree_ends,
                          StepPipeEnds(spec, step_outer_ends, &req));
  req.shell_job = spec.dumped_stdout_ino == 0;  // a --pid dump of a process we did not start
  req.tcp_established = spec.restore_tcp == "established";
  req.tcp_close = spec.restore_tcp == "close";
  if (spec.unprivileged) {
    req.run_as = engine::RunAs{spec.uid, spec.gid, spec.groups};
    log::Info("supervisor: criu restores as uid {} (unprivileged mode)", spec.uid);
  }
  // CRIU follows the images' paths with root's rights unless told otherwise: a path the owner
  // pointed at a root-only file since the dump would be opened for them (docs/security.md).
  if (spec.uid != 0) req.files_owner = engine::RunAs{spec.uid, spec.gid, spec.groups};
  if (!spec.direct_restore) return criu.Restore(req);
  req.leave_stopped = true;
  return criu.RestoreDirect(req);
}

// What is left of the workload once its top process has gone (orphans reparented to us, the
// subreaper): killed and reaped, as the kernel does for a PID namespace whose init exits. In
// unprivileged mode there is no such namespace, and an orphan left to init would keep the
// workload's pid or process group number taken, so that a restore could not have it back.
void ReapOrphans(const std::string& id) {
  int killed = 0;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       std::chrono::steady_clock::now() < deadline;) {
    auto tree = engine::ProcessTreeOf(::getpid());
    if (tree.has_value())
      for (pid_t p : *tree)
        if (p != ::getpid() && ::kill(p, SIGKILL) == 0) ++killed;
    int st;
    pid_t r;
    while ((r = ::waitpid(-1, &st, WNOHANG)) > 0) {
    }
    if (r < 0 && errno == ECHILD) break;
    ::usleep(20000);
  }
  if (killed > 0) log::Info("supervisor: workload {}: killed the processes it left behind", id);
}

// Relays output until the workload has exited and its pipes are closed; records the exit.
// With an owner (the SLURM job proxy), the workload must not outlive it: once the owner is gone
// and no dump is in progress, the workload is killed.
void SuperviseUntilExit(WorkloadRecords& records, const std::string& id, WorkloadState state,
                        UniqueFd out_r, UniqueFd err_r, int out_file, int err_file,
                        pid_t owner_pid) {
  bool exited = false;
  std::chrono::steady_clock::time_point exited_at;
  UniqueFd owner;
  if (owner_pid > 0) {
    owner.Reset(static_cast<int>(::syscall(SYS_pidfd_open, owner_pid, 0)));
    if (!owner.valid()) {
      log::Warn("supervisor: workload {}: owner {} already gone", id, owner_pid);
      ::kill(state.pid, SIGKILL);
    }
  }
  bool owner_gone = false, killed_for_owner = false;
  while (true) {
    pollfd fds[3] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}, {owner.get(), POLLIN, 0}};
    ::poll(fds, 3, 200);
    if (owner.valid() && (fds[2].revents & POLLIN)) {
      owner.Reset();
      owner_gone = true;
      log::Info("supervisor: workload {}: its owner {} exited", id, owner_pid);
    }
    if (owner_gone && !exited && !fs::Exists(records.DumpingMarker(id))) {
      log::Info("supervisor: workload {}: killing it, its job is over", id);
      ::kill(state.pid, SIGKILL);
      killed_for_owner = true;
      owner_gone = false;  // once
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        bool more = RelayAvailable(fds[i].fd, i == 0 ? out_file : err_file);
        if (!more) (i == 0 ? out_r : err_r).Reset();
      }
    }
    int st = 0;
    pid_t r;
    // We are a subreaper: reap everything, note our workload's end.
    while ((r = ::waitpid(-1, &st, WNOHANG)) > 0) {
      if (r == state.pid && !exited) {
        exited = true;
        exited_at = std::chrono::steady_clock::now();
        state.status = WorkloadStatus::kExited;
        state.ended_at_ms = NowMs();
        if (WIFEXITED(st)) {
          state.exit_code = WEXITSTATUS(st);
          // A program that handles a signal may still exit: what asked for the end decides.
          state.ended_by_itself = !killed_for_owner && !fs::Exists(records.DumpingMarker(id)) &&
                                  !fs::Exists(records.KillMarker(id)) &&
                                  !records.LoadEnd(id).has_value();
        } else if (WIFSIGNALED(st)) {
          state.signal = WTERMSIG(st);
          state.exit_code = 128 + state.signal;
        }
      }
    }
    if (r < 0 && errno == ECHILD && !exited) {
      // The workload is gone but we missed its status (should not happen): record it.
      exited = true;
      exited_at = std::chrono::steady_clock::now();
      state.status = WorkloadStatus::kExited;
      state.ended_at_ms = NowMs();
    }
    bool pipes_done = !out_r.valid() && !err_r.valid();
    if (exited &&
        (pipes_done || std::chrono::steady_clock::now() - exited_at > std::chrono::seconds(5)))
      break;
  }
  ReapOrphans(id);
  if (Status s = records.SaveState(id, state); !s.ok())
    log::Error("supervisor: workload {}: recording exit: {}", id, s.ToString());
  log::Info("supervisor: workload {} exited with {}", id, state.exit_code);
}

}  // namespace

int RunSupervisor(const std::string& workload_dir, int report_fd) {
  std::filesystem::path dir(workload_dir);
  std::string id = dir.filename().string();
  WorkloadRecords records(dir.parent_path().parent_path().string());
  log::SetSink(log::StderrAndFileSink(workload_dir + "/supervisor.log"));
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The supervisor ends when its workload does: the workload's own signals go to the workload.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);

  WorkloadState state;
  state.supervisor_pid = ::getpid();
  state.started_at_ms = NowMs();
  auto fail = [&](const Status& s) {
    state.status = WorkloadStatus::kFailed;
    state.error = s.message();
    state.ended_at_ms = NowMs();
    (void)records.SaveState(id, state);
    log::Error("supervisor: workload {}: {}", id, s.ToString());
    Report(report_fd, s, 0);
    return 1;
  };

  Result<WorkloadSpec> spec = records.LoadSpec(id);
  if (!spec.has_value()) return fail(spec.error());
  const std::string record_dir = records.DirOf(id);
  Result<UniqueFd> out_file = OpenOutput(spec->stdout_path, *spec, record_dir);
  if (!out_file.has_value()) return fail(out_file.error());
  UniqueFd err_file_owned;
  int err_file = out_file->get();
  if (spec->stderr_path != spec->stdout_path) {
    Result<UniqueFd> f = OpenOutput(spec->stderr_path, *spec, record_dir);
    if (!f.has_value()) return fail(f.error());
    err_file_owned = std::move(f).value();
    err_file = err_file_owned.get();
  }
  Result<Pipes> pipes = MakePipes();
  if (!pipes.has_value()) return fail(pipes.error());
  if (spec->unprivileged) {
    // CRIU running as the owner reopens the inherited pipe ends through /proc/self/fd, which
    // the pipe inode's owner and mode (root, 0600) would refuse.
    for (int fd : {pipes->out_w.get(), pipes->err_w.get()})
      if (::fchown(fd, spec->uid, spec->gid) != 0)
        return fail(ErrnoStatus(errno, "giving the output pipes to the workload's owner"));
  }

  std::vector<UniqueFd> step_outer_ends;  // kept open while the workload runs
  Result<pid_t> pid = spec->mode == WorkloadMode::kRestore
                          ? RestoreWithCriu(*spec, *pipes, &step_outer_ends)
                          : StartWorkload(*spec, *pipes);
  if (!pid.has_value()) return fail(pid.error());

  state.pid = *pid;
  state.status = WorkloadStatus::kRunning;
  if (spec->owner_pid > 0) {
    // Into the job's cgroups (proctrack/cgroup): accounted with the job, killed with it.
    // owner_pid was checked to be the caller's process when the request came in (handlers.cc).
    auto files = CgroupProcsFilesOf(spec->owner_pid);
    auto tree = engine::ProcessTreeOf(state.pid);
    std::string err;
    if (!files.empty() && tree.has_value() && JoinCgroups(files, *tree, &err) > 0)
      log::Warn("supervisor: workload {}: joining the job's cgroups: {}", id, err);
  }
  state.stdout_ino = InodeOf(pipes->out_w.get());
  state.stderr_ino = InodeOf(pipes->err_w.get());
  // Only the workload holds the write ends now, so its exit closes the pipes.
  pipes->out_w.Reset();
  pipes->err_w.Reset();
  if (Status s = records.SaveState(id, state); !s.ok()) {
    ::kill(state.pid, SIGKILL);
    return fail(s.WithContext("recording state"));
  }
  log::Info("supervisor: workload {} {} as pid {}", id,
            spec->mode == WorkloadMode::kRestore ? "restored" : "started", state.pid);
  Report(report_fd, OkStatus(), state.pid);
  SuperviseUntilExit(records, id, state, std::move(pipes->out_r), std::move(pipes->err_r),
                     out_file->get(), err_file, spec->owner_pid);
  return 0;
}

Result<SupervisorStarted> LaunchSupervisor(const WorkloadRecords& records, const std::string& id,
                                           const std::string& self_exe, int timeout_seconds) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return ErrnoStatus(errno, "creating report pipe");
  UniqueFd report_r(report[0]), report_w(report[1]);
  std::string dir = records.DirOf(id);
  // Detached in a new session: the supervisor is nobody's child but init's, so the daemon can
  // exit or restart without touching it. Nothing of the daemon's leaks into it but the report
  // pipe, and so nothing into workloads and their checkpoints (an inherited log file would fail
  // the restore: CRIU checks file sizes).
  subprocess::Command supervisor;
  supervisor.argv = {self_exe, "supervisor",  "--dir",
                     dir,      "--report-fd", std::to_string(report_w.get())};
  supervisor.fds = {{report_w.get(), report_w.get()}};
  supervisor.new_session = true;
  supervisor.detached = true;
  Result<pid_t> started = subprocess::Start(supervisor);
  if (!started.has_value())
    return Status(started.error())
        .WithContext(fmt::format("workload {}: starting the supervisor", id));
  report_w.Reset();

  protocol::MessageReader reader(report_r.get());
  pollfd p{report_r.get(), POLLIN, 0};
  int ready = ::poll(&p, 1, timeout_seconds * 1000);
  if (ready == 0)
    return DeadlineExceededError(
        fmt::format("workload {}: supervisor did not report within {} s", id, timeout_seconds));
  Result<protocol::Message> m = reader.Read();
  if (!m.has_value())
    return UnavailableError(fmt::format(
        "workload {}: supervisor exited before reporting (see {}/supervisor.log)", id, dir));
  if (!m->value("ok", false)) return protocol::StatusFromResult(*m);
  return SupervisorStarted{m->value("pid", 0), m->value("supervisor_pid", 0)};
}

}  // namespace cedana::daemon
