#include "daemon/server.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "common/version.h"
#include "daemon/agent.h"
#include "daemon/connection_limits.h"
#include "daemon/handlers.h"
#include "daemon/housekeeper.h"
#include "daemon/metrics_server.h"
#include "daemon/peer_link.h"
#include "daemon/recovery.h"
#include "daemon/step_parts.h"
#include "daemon/thread_group.h"
#include "engine/breakpoint_probe.h"
#include "engine/criu_client.h"
#include "image/manifest.h"
#include "protocol/client.h"
#include "protocol/daemon_request.h"

namespace cedana::daemon {
namespace {

// A request (one line) must have arrived this long after the connection was accepted.
constexpr auto kRequestDeadline = std::chrono::seconds(10);
// A failed request's log line carries at most this much of the error (it may quote the request).
constexpr size_t kMaxLoggedError = 1024;

Result<std::string> LoadOrCreateClusterKey(const std::string& path) {
  if (fs::Exists(path)) return image::ReadClusterKey(path);
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(std::filesystem::path(path).parent_path().string(), 0755));
  unsigned char raw[32];
  if (::getrandom(raw, sizeof raw, 0) != static_cast<ssize_t>(sizeof raw))
    return ErrnoStatus(errno, "getrandom for the cluster key");
  std::string key = HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof raw));
  CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(path, key + "\n", 0600));
  log::Info("daemon: created cluster key {} (copy it to every node of the cluster)", path);
  return key;
}

Result<bool> DecideNoBreakpoints(BreakpointFallback mode) {
  if (mode == BreakpointFallback::kOn) return true;
  if (mode == BreakpointFallback::kOff) return false;
  CEDANA_ASSIGN_OR_RETURN(bool works, engine::HardwareBreakpointsWork());
  if (!works)
    log::Warn(
        "daemon: hardware breakpoints do not work on this machine; running CRIU with its "
        "no-breakpoint fallback (CRIU_FAULT=130)");
  return !works;
}

Result<UniqueFd> Listen(const std::string& path) {
  // A live daemon on the socket is an error; a stale socket file is replaced.
  if (fs::Exists(path)) {
    if (protocol::CallDaemon(path, {{"op", "ping"}}).has_value())
      return AlreadyExistsError("a cedana daemon is already listening on " + path);
    ::unlink(path.c_str());
  }
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(std::filesystem::path(path).parent_path().string(), 0755));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus(errno, "socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    return InvalidArgumentError("socket path too long: " + path);
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return ErrnoStatus(errno, "binding " + path);
  // Every user may connect; each request is authorised by the peer's credentials.
  ::chmod(path.c_str(), 0666);
  if (::listen(fd.get(), 64) != 0) return ErrnoStatus(errno, "listening on " + path);
  return fd;
}

void ServeConnection(NodeContext& node, UniqueFd conn, const Caller& caller,
                     std::chrono::steady_clock::time_point accepted) {
  protocol::MessageReader reader(conn.get());
  Result<protocol::Message> req = reader.Read(accepted + kRequestDeadline);
  if (!req.has_value()) return;
  // Outside the try below: RequestOpName never throws (value() would, on a non-string op).
  std::string op = protocol::RequestOpName(*req);
  Result<protocol::Message> result = InternalError("unhandled");
  try {
    result = HandleRequest(node, caller, *req, [&](const protocol::Message& m) {
      (void)protocol::WriteMessage(conn.get(), m);
    });
  } catch (const std::exception& e) {
    result = InternalError(std::string("unexpected exception: ") + e.what());
  }
  if (result.has_value()) {
    (void)protocol::WriteMessage(conn.get(), protocol::OkResult(std::move(result).value()));
  } else {
    if (op != "ping")
      log::Warn("daemon: {} from uid {}: {}", op.substr(0, 64), caller.uid,
                result.error().ToString().substr(0, kMaxLoggedError));
    (void)protocol::WriteMessage(conn.get(), protocol::ErrorResult(result.error()));
  }
}

// Says why on a connection that is not served (without blocking: the peer may not read) and logs
// it, at most once a second, so that a flood of refused connections does not flood the log.
void RefuseConnection(int fd, uid_t uid, const std::string& why) {
  std::string line = protocol::ErrorResult(UnavailableError(why)).dump() + "\n";
  (void)::send(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  static std::atomic<int64_t> last_logged_s{0};
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  if (last_logged_s.exchange(now_s) != now_s)
    log::Warn("daemon: refused a connection of uid {}: {}", uid, why);
}

std::string SelfExe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "/usr/local/bin/cedana" : p.string();
}

}  // namespace

int RunDaemon(const Config& config) {
  // Buffers of 8 MiB and more (stream parts, S3 parts, chunk regions) are allocated once per
  // operation and reused within it; mapped, they go back to the kernel when it ends. glibc would
  // otherwise raise its mmap threshold to the size of the first one freed (up to 32 MiB) and
  // serve the next ones from its per-thread arenas, which keep what is freed: the daemon then
  // stayed at its peak and the next operations started from there. A fixed threshold also fixes
  // the trim threshold, below which an arena keeps its free top; at its default (128 KiB) every
  // chunk's buffers (4 MiB at most) went back to the kernel and came back as fresh pages, which
  // made deduplicated restores 35% slower. Twice the mmap threshold is glibc's own ratio.
  constexpr int kMmapThreshold = 8 << 20;
  ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, 2 * kMmapThreshold);
  // glibc gives a thread that finds the other arenas busy one of its own, up to eight per core,
  // and each arena keeps what is freed into it (up to the trim threshold, and its fragments).
  // Every dump and restore starts new worker threads, so the daemon grew with each operation,
  // not with its work: four deduplicated dumps of the same 8-process tree peaked at 161, 195,
  // 205 and 209 MiB, idle at 66 to 90 MiB between them, until a dump went over
  // checkpoint.memory_limit_mib. With two arenas: 161-167 MiB, idle 48-50 MiB. The daemon's
  // threads allocate a buffer per chunk or region, rarely enough not to wait on an arena.
  ::mallopt(M_ARENA_MAX, 2);
  log::SetLevel(config.log_level);
  if (!config.node.log_file.empty())
    (void)fs::MakeDirs(std::filesystem::path(config.node.log_file).parent_path().string(), 0755);
  log::SetSink(log::StderrAndFileSink(config.node.log_file));
  // A direct restore of a deduplicated checkpoint holds a file open per chunk of each pages
  // image CRIU reads in place (4 GiB: about 4,300); what the daemon starts keeps the old limit.
  if (Status s = subprocess::RaiseOwnFileLimit(); !s.ok())
    log::Warn("daemon: {}; deduplicated restores read fewer images in place", s.ToString());

  auto fail = [](const Status& s) {
    log::Error("daemon: cannot start: {}", s.ToString());
    return 1;
  };
  // The daemon's own dirs: users traverse them to their workloads' records and (unprivileged
  // mode) to the images dirs given to them, and list nothing; an existing one is set so too.
  for (const auto& dir : {config.node.state_dir + "/workloads", config.node.work_dir}) {
    if (Status s = fs::MakeDirs(dir, 0711); !s.ok()) return fail(s);
    ::chmod(dir.c_str(), 0711);
  }

  Result<bool> no_breakpoints = DecideNoBreakpoints(config.node.criu_no_breakpoints);
  if (!no_breakpoints.has_value()) return fail(no_breakpoints.error());
  engine::CriuSettings settings{config.node.criu_binary,
                                std::chrono::seconds(config.node.criu_timeout_seconds),
                                *no_breakpoints};
  Result<engine::CriuClient> criu = engine::CriuClient::Create(settings);
  if (!criu.has_value()) return fail(criu.error());
  Result<std::string> criu_version = criu->Version();
  if (!criu_version.has_value()) return fail(criu_version.error());
  if (config.node.slurm_unprivileged) {
    // Not fatal: root's own workloads still work; users' dumps fail with this same message.
    if (Status s = engine::CheckUnprivilegedCapable(criu->settings().binary); !s.ok())
      log::Warn("daemon: {}", s.message());
    else log::Info("daemon: unprivileged mode: CRIU runs as each workload's owner");
  }
  Result<std::string> key = LoadOrCreateClusterKey(config.cluster_key_file);
  if (!key.has_value()) return fail(key.error());

  // Block the stop signals and read them from a signalfd in the accept loop.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  UniqueFd sigfd(::signalfd(-1, &stop, SFD_CLOEXEC));

  Result<UniqueFd> listener = Listen(config.socket_path);
  if (!listener.has_value()) return fail(listener.error());
  NodeSeams seams;
  seams.engine = std::make_unique<engine::CriuClient>(std::move(criu).value());
  seams.processes = std::make_unique<engine::HostProcesses>();
  seams.launcher = std::make_unique<SupervisorLauncher>(SelfExe());
  seams.open_store = [config](const std::string& location) {
    return storage::OpenStore(location, config.s3, StreamMemoryOf(config.node));
  };
  NodeContext node(config, std::move(seams), *key, NodeName(config), *criu_version);
  RecoverInterruptedOperations(node);

  int running = 0;
  if (auto ids = node.records().List(); ids.has_value())
    for (const auto& id : *ids)
      if (auto st = node.records().LoadState(id);
          st.has_value() && st->status == WorkloadStatus::kRunning)
        ++running;
  log::Info(
      "daemon: cedana {} listening on {} (criu {} at {}, no-breakpoints {}, {} running "
      "workloads found)",
      kVersion, config.socket_path, *criu_version, node.engine().settings().binary,
      *no_breakpoints ? "on" : "off", running);

  // Declared after node: stopped before node goes. A port that cannot be bound is said and the
  // daemon goes on without it: checkpoints matter more than their figures.
  MetricsServer metrics(node.metrics());
  if (config.node.daemon_metrics_port > 0)
    if (Status s = metrics.Start(config.node.daemon_metrics_port); !s.ok())
      log::Warn("daemon: {}", s.ToString());
  // Declared after node: stopped (its requests and the parts' dumps finished) before node goes.
  // Without it, this node's parts of jobs over several nodes are not checkpointed.
  StepPartsService parts(node);
  PeerServer peers;
  parts.Serve(peers);
  if (config.node.daemon_peer_port > 0)
    if (Status s = peers.Start(config.node.daemon_peer_port); !s.ok())
      log::Warn("daemon: {}", s.ToString());
  // Declared after node: stopped before node goes.
  Housekeeper housekeeper(node);
  housekeeper.Start();
  // Declared after node: stopped (and its operations finished) before node goes.
  std::optional<Agent> agent;
  if (!config.url.empty()) {
    if (config.auth_token.empty()) {
      log::Warn(
          "daemon: connection.url is set but connection.auth_token is not: not reporting to the "
          "controller");
    } else {
      agent.emplace(node, node.hostname());
      agent->Start();
    }
  }

  ConnectionLimits& limits = node.connection_limits();
  // Declared after node: every connection's thread is joined before node goes.
  ThreadGroup connections("daemon: connection");
  for (;;) {
    pollfd fds[2] = {{listener->get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo si{};
      if (::read(sigfd.get(), &si, sizeof si) > 0)
        log::Info("daemon: signal {} received, stopping (workloads keep running)", si.ssi_signo);
      break;
    }
    if (fds[0].revents & POLLIN) {
      UniqueFd conn(::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.valid()) continue;
      auto accepted = std::chrono::steady_clock::now();
      ucred cred{};
      socklen_t len = sizeof cred;
      if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) continue;
      // Any local user may connect: bound the threads per user and in all, keep some for root,
      // and give each request one deadline to arrive.
      if (std::string why = limits.Admit(cred.uid); !why.empty()) {
        RefuseConnection(conn.get(), cred.uid, why);
        continue;
      }
      connections.Start(
          [&node, &limits, c = std::make_shared<UniqueFd>(std::move(conn)), cred, accepted] {
            ServeConnection(node, std::move(*c), Caller{cred.uid, cred.gid, cred.pid}, accepted);
            limits.Release(cred.uid);
          });
    }
  }
  ::unlink(config.socket_path.c_str());
  // Requests in flight finish before we exit, however long they take: a dump ends or rolls back
  // by itself (CRIU's own deadline bounds it), never half done.
  connections.Wait(std::chrono::seconds(10), [](size_t n) {
    log::Info("daemon: waiting for {} request(s) in flight to finish (a dump ends or rolls back)",
              n);
  });
  return 0;
}

}  // namespace cedana::daemon
