#include "engine/criu_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <fstream>

#include <fmt/format.h>

#include "common/capabilities.h"
#include "common/log.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "engine/process_tree.h"
#include "engine/rpc.pb.h"

namespace cedana::engine {
namespace {

constexpr size_t kMaxMessage = 1 << 20;
constexpr const char* kCriuFaultNoBreakpoints = "130";  // CRIU's "no hw breakpoints" fault code

bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// One running `criu swrk`: its pid and our end of the socketpair.
struct SwrkProcess {
  pid_t pid = -1;
  UniqueFd sock;
};

// "\n--- last lines of <log> ---\n<tail>" for error messages, "" when the log is empty.
std::string LogTailNote(const std::string& log) {
  std::string tail = LogTail(log);
  return tail.empty() ? "" : "\n--- last lines of " + log + " ---\n" + tail;
}

// CRIU's environment, built before fork (the child may only make async-signal-safe calls):
// ours, with CRIU_FAULT for the no-breakpoint fallback and CRIU_RESTORE_FS_OWNER for a restore
// that opens files as the checkpoint's owner.
std::vector<std::string> CriuEnvironment(const CriuSettings& settings,
                                         const std::optional<RunAs>& files_owner) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "CRIU_FAULT=", 11) != 0 &&
        std::strncmp(*e, "CRIU_RESTORE_FS_OWNER=", 22) != 0)
      env.emplace_back(*e);
  if (settings.no_breakpoints) env.push_back(std::string("CRIU_FAULT=") + kCriuFaultNoBreakpoints);
  if (files_owner) {
    std::string owner =
        fmt::format("CRIU_RESTORE_FS_OWNER={}:{}", files_owner->uid, files_owner->gid);
    for (size_t i = 0; i < files_owner->groups.size(); ++i)
      owner += fmt::format("{}{}", i == 0 ? ":" : ",", files_owner->groups[i]);
    env.push_back(std::move(owner));
  }
  return env;
}

// CRIU as a child of ours: its environment, the fds it inherits at their numbers (`keep_fds`,
// for inherit-fd), and, with `run_as`, that user's identity (the capabilities it needs come
// from its binary's file capabilities when it is exec'd). CRIU must not die with our terminal's
// signals: we stop it ourselves at the deadline.
subprocess::Command CriuCommand(const CriuSettings& settings, std::vector<std::string> args,
                                const std::vector<int>& keep_fds,
                                const std::optional<RunAs>& run_as,
                                const std::optional<RunAs>& files_owner) {
  subprocess::Command c;
  c.argv = std::move(args);
  c.env = CriuEnvironment(settings, files_owner);
  c.identity = run_as;
  // SIGPIPE too, as CRIU had it from the daemon before its signals were reset: an image stream
  // whose reader failed must be EPIPE for CRIU, which then cures the tree and resumes it, never
  // a kill with its parasite still in the tasks.
  c.ignored_signals = {SIGINT, SIGPIPE};
  for (int fd : keep_fds) c.fds.emplace_back(fd, fd);
  return c;
}

// Starts `criu swrk <fd>`.
Result<SwrkProcess> StartSwrk(const CriuSettings& settings, const std::vector<int>& keep_fds,
                              const std::optional<RunAs>& run_as,
                              const std::optional<RunAs>& files_owner) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return ErrnoStatus(errno, "socketpair for criu swrk");
  UniqueFd ours(sv[0]), theirs(sv[1]);
  std::vector<int> fds = keep_fds;
  fds.push_back(theirs.get());
  CEDANA_ASSIGN_OR_RETURN(
      pid_t pid, subprocess::Start(
                     CriuCommand(settings, {settings.binary, "swrk", std::to_string(theirs.get())},
                                 fds, run_as, files_owner)));
  return SwrkProcess{pid, std::move(ours)};
}

Status SendRequest(int sock, const criu_req& req) {
  std::string data;
  if (!req.SerializeToString(&data)) return InternalError("serializing criu request");
  if (::send(sock, data.data(), data.size(), MSG_NOSIGNAL) < 0)
    return ErrnoStatus(errno, "sending request to criu");
  return OkStatus();
}

// Waits for one response until `deadline`; kDeadlineExceeded past it.
Result<criu_resp> ReceiveResponse(int sock, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return DeadlineExceededError("criu did not answer in time");
    pollfd p{sock, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) return ErrnoStatus(errno, "waiting for criu");
    if (r <= 0) continue;
    std::string buf(kMaxMessage, '\0');
    ssize_t n = ::recv(sock, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "reading criu's answer");
    }
    if (n == 0) return UnavailableError("criu exited without answering");
    criu_resp resp;
    if (!resp.ParseFromArray(buf.data(), static_cast<int>(n)))
      return InternalError("criu sent an unparsable answer");
    return resp;
  }
}

// Reaps CRIU; kills it first when `kill_first`.
void Reap(pid_t pid, bool kill_first) {
  if (kill_first) ::kill(pid, SIGKILL);
  (void)subprocess::Wait(pid);
}

// CRIU's error lines, without the RLIMIT_NOFILE complaint it prints on every run here.
std::string ErrorLines(const std::string& log, int max = 4) {
  std::ifstream in(log);
  std::string line, out;
  int n = 0;
  while (n < max && std::getline(in, line)) {
    if (line.find("Error (") == std::string::npos ||
        line.find("RLIMIT_NOFILE") != std::string::npos)
      continue;
    out += (out.empty() ? "" : "; ") + line.substr(line.find("Error ("));
    ++n;
  }
  return out;
}

// What a user can do about CRIU errors that come from how the process was started rather than
// from CRIU or the machine.
std::string HintFor(const std::string& errors) {
  if (errors.find("is outside of its pid namespace") != std::string::npos)
    return " (the process's session leader lives in another PID namespace; start the program "
           "with setsid, or under `cedana run`, to make it checkpointable)";
  if (errors.find("Can't fork for") != std::string::npos &&
      errors.find("File exists") != std::string::npos)
    return " (another process uses one of the dumped pids now; unprivileged mode restores "
           "workloads with their original pids, in the node's PID namespace)";
  return "";
}

Status ResponseError(const criu_resp& resp, const std::string& what, const std::string& log) {
  std::string msg = fmt::format("criu {} failed", what);
  std::string errors = ErrorLines(log);
  if (!errors.empty()) msg += ": " + errors + HintFor(errors);
  else if (resp.has_cr_errmsg() && !resp.cr_errmsg().empty()) msg += ": " + resp.cr_errmsg();
  int err = resp.has_cr_errno() ? resp.cr_errno() : 0;
  if (err != 0) msg += fmt::format(" ({})", std::strerror(err));
  msg += LogTailNote(log);
  // CRIU failures are retryable as a whole operation unless they are about permissions.
  Code code = (err == EPERM || err == EACCES) ? Code::kPermissionDenied : Code::kAborted;
  return Status(code, msg, err);
}

// Runs one request through a fresh `criu swrk`. On deadline CRIU is killed.
Result<criu_resp> Call(const CriuSettings& settings, const criu_req& req,
                       const std::vector<int>& keep_fds, const std::optional<RunAs>& run_as = {},
                       const std::optional<RunAs>& files_owner = {}) {
  CEDANA_ASSIGN_OR_RETURN(SwrkProcess criu, StartSwrk(settings, keep_fds, run_as, files_owner));
  auto deadline = std::chrono::steady_clock::now() + settings.timeout;
  if (Status s = SendRequest(criu.sock.get(), req); !s.ok()) {
    Reap(criu.pid, true);
    return s;
  }
  Result<criu_resp> resp = ReceiveResponse(criu.sock.get(), deadline);
  // CRIU exits after one request (no keep_open); kill it if it is stuck or already answered
  // but lingers.
  criu.sock.Reset();
  Reap(criu.pid, !resp.has_value());
  return resp;
}

// CRIU opens the images dir through /proc/<our pid>/fd/<fd> (the peer of the socketpair), so the
// fd stays in our process; a plain images_dir path is not usable over RPC in CRIU 4.1.
Result<UniqueFd> OpenImagesDir(const std::string& images_dir) {
  UniqueFd fd(::open(images_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "opening images dir " + images_dir);
  return fd;
}

// Unprivileged mode: checked before CRIU starts, so that a missing setcap is reported as such
// rather than as whichever EPERM CRIU meets first.
Status PrepareRunAs(const CriuSettings& settings, const std::optional<RunAs>& run_as,
                    criu_opts* opts) {
  if (!run_as) return OkStatus();
  CEDANA_RETURN_IF_ERROR(CheckUnprivilegedCapable(settings.binary));
  opts->set_unprivileged(true);
  return OkStatus();
}

void FillCommon(criu_opts* opts, int images_dir_fd, const char* log_file) {
  opts->set_images_dir_fd(images_dir_fd);
  opts->set_log_file(log_file);
  opts->set_log_level(4);
  // Our workloads live in their own pid namespace only; the rest of the system is shared.
  opts->set_manage_cgroups(false);
}

// Without connected TCP sockets to keep consistent nothing is locked; with them CRIU's nftables
// lock (this project's CRIU is built with libnftables; iptables is not needed).
criu_network_lock_method NetworkLock(bool tcp_established) {
  return tcp_established ? criu_network_lock_method::NFTABLES : criu_network_lock_method::SKIP;
}
std::string NetworkLockArg(bool tcp_established) {
  return tcp_established ? "--network-lock=nftables" : "--network-lock=skip";
}

// `criu dump --stream` with the options Dump sets over RPC.
std::vector<std::string> DirectDumpArgs(const CriuSettings& settings, const DumpRequest& r) {
  std::vector<std::string> args = {settings.binary,
                                   "dump",
                                   "--stream",
                                   "-D",
                                   r.images_dir,
                                   "-t",
                                   std::to_string(r.pid),
                                   "-o",
                                   "dump.log",
                                   "-v4",
                                   "--manage-cgroups=ignore",
                                   NetworkLockArg(r.tcp_established),
                                   "--ext-unix-sk"};
  if (r.leave_running) args.push_back("--leave-running");
  if (r.leave_stopped) args.push_back("--leave-stopped");
  if (r.shell_job) args.push_back("--shell-job");
  if (r.tcp_established) args.push_back("--tcp-established");
  if (r.tcp_close) args.push_back("--tcp-close");
  if (r.file_locks) args.push_back("--file-locks");
  if (r.run_as) args.push_back("--unprivileged");
  return args;
}

// `criu restore --stream` with the options Restore sets over RPC, the restored tree left
// stopped, and its root's pid written to <images_dir>/restored.pid.
std::vector<std::string> DirectRestoreArgs(const RestoreRequest& r, const std::string& binary) {
  std::vector<std::string> args = {binary,
                                   "restore",
                                   "--stream",
                                   "-D",
                                   r.images_dir,
                                   "-o",
                                   "restore.log",
                                   "-v4",
                                   "--manage-cgroups=ignore",
                                   NetworkLockArg(r.tcp_established),
                                   "--ext-unix-sk",
                                   "--file-locks",
                                   "--restore-detached",
                                   "--pidfile",
                                   r.images_dir + "/restored.pid"};
  if (r.tcp_established) args.push_back("--tcp-established");
  if (r.tcp_close) args.push_back("--tcp-close");
  if (r.rst_sibling) args.push_back("--restore-sibling");
  if (r.leave_stopped) args.push_back("--leave-stopped");
  if (r.shell_job) args.push_back("--shell-job");
  if (r.run_as) args.push_back("--unprivileged");
  for (const auto& [key, fd] : r.inherit_fds) {
    args.push_back("--inherit-fd");
    args.push_back(fmt::format("fd[{}]:{}", fd, key));
  }
  return args;
}

// The error of a criu command line that exited with `status`: its log's errors, or why it
// did not run.
Status CliFailure(const std::string& what, int status, const std::string& log) {
  std::string msg = "criu " + what + " failed";
  std::string errors = ErrorLines(log);
  if (!errors.empty()) msg += ": " + errors + HintFor(errors);
  if (WIFSIGNALED(status)) msg += fmt::format(" (criu killed by signal {})", WTERMSIG(status));
  return AbortedError(msg + LogTailNote(log));
}

// Starts the criu command line (stdio on /dev/null: it logs to its -o file).
Result<pid_t> StartCriuCli(const CriuSettings& settings, const std::vector<std::string>& args,
                           const std::optional<RunAs>& run_as,
                           const std::vector<int>& keep_fds = {},
                           const std::optional<RunAs>& files_owner = {}) {
  return subprocess::Start(CriuCommand(settings, args, keep_fds, run_as, files_owner));
}

}  // namespace

std::string LogTail(const std::string& path, int lines) {
  std::ifstream in(path);
  if (!in) return "";
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += l + "\n";
  return out;
}

Result<std::string> FindCriuBinary(const std::string& configured) {
  if (!configured.empty()) {
    if (IsExecutable(configured)) return configured;
    return NotFoundError("criu binary " + configured + " (criu.binary) is not executable");
  }
  // Our PATH first, then where scripts/setup.sh and Debian put it.
  const char* path = ::getenv("PATH");
  std::string dirs = std::string(path != nullptr ? path : "") +
                     ":/usr/local/bin:/usr/local/sbin:/opt/cedana/criu/sbin:/usr/sbin";
  if (Result<std::string> found = subprocess::FindProgram("criu", dirs); found.has_value())
    return found;
  return NotFoundError(
      "criu not found in PATH, /usr/local/bin or /opt/cedana/criu/sbin; run scripts/setup.sh "
      "or set criu.binary (CEDANA_CRIU_BINARY)");
}

Status CheckUnprivilegedCapable(const std::string& binary) {
  CEDANA_ASSIGN_OR_RETURN(uint64_t caps, FileCapabilities(binary));
  uint64_t missing = kUnprivilegedModeCapabilities & ~caps;
  if (missing == 0) return OkStatus();
  return FailedPreconditionError(fmt::format(
      "unprivileged mode (slurm.unprivileged) runs criu as the job's user, but {} lacks {}; run "
      "`cedana slurm setup` or `setcap {}+eip {}`",
      binary, CapabilityNames(missing), CapabilityNames(kUnprivilegedModeCapabilities), binary));
}

Result<CriuClient> CriuClient::Create(CriuSettings settings) {
  CEDANA_ASSIGN_OR_RETURN(settings.binary, FindCriuBinary(settings.binary));
  CriuClient client(std::move(settings));
  CEDANA_ASSIGN_OR_RETURN(std::string version, client.Version());
  if (version.empty() || version[0] < '4' || (version.size() > 1 && version[1] != '.'))
    return FailedPreconditionError(
        fmt::format("criu {} at {} is too old: CRIU >= 4.0 is needed (run scripts/setup.sh)",
                    version, client.settings_.binary));
  return client;
}

Result<std::string> CriuClient::Version() const {
  criu_req req;
  req.set_type(criu_req_type::VERSION);
  Result<criu_resp> call = Call(settings_, req, {});
  if (!call.has_value())
    return call.error().WithContext("asking " + settings_.binary + " for its version");
  const criu_resp& resp = *call;
  if (!resp.success() || !resp.has_version())
    return AbortedError("criu " + settings_.binary + " did not report its version");
  const auto& v = resp.version();
  std::string out = fmt::format("{}.{}", v.major_number(), v.minor_number());
  if (v.has_sublevel()) out += fmt::format(".{}", v.sublevel());
  return out;
}

Status CriuClient::Dump(const DumpRequest& request) const {
  criu_req req;
  req.set_type(criu_req_type::DUMP);
  criu_opts* opts = req.mutable_opts();
  CEDANA_ASSIGN_OR_RETURN(UniqueFd dir_fd, OpenImagesDir(request.images_dir));
  FillCommon(opts, dir_fd.get(), "dump.log");
  opts->set_pid(request.pid);
  opts->set_leave_running(request.leave_running);
  if (request.leave_stopped) opts->set_leave_stopped(true);
  opts->set_shell_job(request.shell_job);
  opts->set_tcp_established(request.tcp_established);
  if (request.tcp_close) opts->set_tcp_close(true);
  opts->set_network_lock(NetworkLock(request.tcp_established));
  opts->set_file_locks(request.file_locks);
  opts->set_ext_unix_sk(true);
  CEDANA_RETURN_IF_ERROR(PrepareRunAs(settings_, request.run_as, opts));
  std::string log = request.images_dir + "/dump.log";

  Result<criu_resp> resp = Call(settings_, req, {}, request.run_as);
  if (!resp.has_value()) {
    // CRIU died or was killed mid-dump: whatever it had seized is released by the kernel when
    // CRIU exits, but tasks it had stopped stay stopped. Continue them: never leave a workload
    // frozen.
    int n = SignalTree(request.pid, SIGCONT);
    log::Warn("engine: dump of pid {} aborted, sent SIGCONT to {} processes", request.pid, n);
    return Status(resp.error().code(), resp.error().message() + LogTailNote(log));
  }
  if (!resp->success()) return ResponseError(*resp, "dump", log);
  return OkStatus();
}

Status CriuClient::DumpDirect(const DumpRequest& request, ImageReceiver* receiver) const {
  if (request.run_as) {
    CEDANA_RETURN_IF_ERROR(CheckUnprivilegedCapable(settings_.binary));
  }
  std::optional<std::pair<uid_t, gid_t>> owner;
  if (request.run_as) owner.emplace(request.run_as->uid, request.run_as->gid);
  CEDANA_ASSIGN_OR_RETURN(auto capture, ImageCapture::Listen(request.images_dir, owner, receiver));
  std::string log = request.images_dir + "/dump.log";
  auto deadline = std::chrono::steady_clock::now() + settings_.timeout;
  CEDANA_ASSIGN_OR_RETURN(
      pid_t pid, StartCriuCli(settings_, DirectDumpArgs(settings_, request), request.run_as));
  // After a receiver failure CRIU fails at its next write; give it a little time to say so and
  // resume the tree itself before killing it.
  constexpr auto kGraceAfterFailure = std::chrono::seconds(10);
  std::optional<std::chrono::steady_clock::time_point> failed_at;
  int status = 0;
  bool killed = false;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return ErrnoStatus(errno, "waiting for criu");
    auto now = std::chrono::steady_clock::now();
    if (!failed_at && capture->failed()) failed_at = now;
    if (now >= deadline || (failed_at && now - *failed_at >= kGraceAfterFailure)) {
      Reap(pid, true);
      killed = true;
      break;
    }
    ::usleep(5000);
  }
  if (!killed && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    // CRIU closed its pipes; the last bytes may still be on their way to the receiver.
    return capture->Wait(deadline);
  }
  Status streamer = capture->failed() ? capture->status() : OkStatus();
  capture->Stop();
  if (killed || WIFSIGNALED(status)) {
    // As in Dump: tasks CRIU had stopped stay stopped when it dies. Never leave them frozen.
    int n = SignalTree(request.pid, SIGCONT);
    log::Warn("engine: direct dump of pid {} aborted, sent SIGCONT to {} processes", request.pid,
              n);
  }
  std::string tail_note = LogTailNote(log);
  if (!streamer.ok()) {
    // The cause is ours (the store failed): CRIU's EPIPE is only its consequence.
    return Status(streamer.code(), "criu dump stopped: " + streamer.message() + tail_note);
  }
  if (killed) return DeadlineExceededError("criu did not finish the dump in time" + tail_note);
  return CliFailure("dump", status, log);
}

Result<pid_t> CriuClient::RestoreDirect(const RestoreRequest& request) const {
  if (request.run_as) {
    CEDANA_RETURN_IF_ERROR(CheckUnprivilegedCapable(settings_.binary));
  }
  std::vector<int> keep;
  for (const auto& [key, fd] : request.inherit_fds) keep.push_back(fd);
  std::string log = request.images_dir + "/restore.log";
  auto deadline = std::chrono::steady_clock::now() + settings_.timeout;
  CEDANA_ASSIGN_OR_RETURN(pid_t pid,
                          StartCriuCli(settings_, DirectRestoreArgs(request, settings_.binary),
                                       request.run_as, keep, request.files_owner));
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return ErrnoStatus(errno, "waiting for criu");
    if (std::chrono::steady_clock::now() >= deadline) {
      // What CRIU had restored is in our subtree (its root is our child): the caller reaps it.
      Reap(pid, true);
      return DeadlineExceededError("criu did not finish the restore in time" + LogTailNote(log));
    }
    ::usleep(5000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::ifstream pidfile(request.images_dir + "/restored.pid");
    pid_t root = 0;
    if (!(pidfile >> root) || root <= 0)
      return InternalError("criu restore did not write the restored pid" + LogTailNote(log));
    return root;
  }
  return CliFailure("restore", status, log);
}

Result<pid_t> CriuClient::Restore(const RestoreRequest& request) const {
  criu_req req;
  req.set_type(criu_req_type::RESTORE);
  criu_opts* opts = req.mutable_opts();
  CEDANA_ASSIGN_OR_RETURN(UniqueFd dir_fd, OpenImagesDir(request.images_dir));
  FillCommon(opts, dir_fd.get(), "restore.log");
  opts->set_shell_job(request.shell_job);
  opts->set_rst_sibling(request.rst_sibling);
  if (request.tcp_established) opts->set_tcp_established(true);
  if (request.tcp_close) opts->set_tcp_close(true);
  opts->set_network_lock(NetworkLock(request.tcp_established));
  opts->set_file_locks(true);
  opts->set_ext_unix_sk(true);
  std::vector<int> keep;
  for (const auto& [key, fd] : request.inherit_fds) {
    inherit_fd* f = opts->add_inherit_fd();
    f->set_key(key);
    f->set_fd(fd);
    keep.push_back(fd);
  }
  CEDANA_RETURN_IF_ERROR(PrepareRunAs(settings_, request.run_as, opts));
  std::string log = request.images_dir + "/restore.log";
  Result<criu_resp> resp = Call(settings_, req, keep, request.run_as, request.files_owner);
  if (!resp.has_value()) {
    return Status(resp.error().code(), resp.error().message() + LogTailNote(log));
  }
  if (!resp->success()) return ResponseError(*resp, "restore", log);
  if (!resp->has_restore()) return InternalError("criu restore answered without a pid");
  return static_cast<pid_t>(resp->restore().pid());
}

}  // namespace cedana::engine
