#include "job_proxy/attach.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "common/checkpoint_reason.h"
#include "common/config.h"
#include "common/label.h"
#include "job_proxy/job_deadlines.h"
#include "job_proxy/job_polling.h"
#include "job_proxy/slurm_job.h"
#include "job_proxy/task_process.h"
#include "job_proxy/time_limit.h"
#include "protocol/client.h"
#include "protocol/daemon_reply.h"
#include "protocol/daemon_request.h"
#include "slurm/batch_script_env.h"

namespace cedana::job_proxy {
namespace {

volatile std::sig_atomic_t g_term = 0;  // SIGTERM/SIGINT: checkpoint, then end
volatile std::sig_atomic_t g_usr1 = 0;  // SIGUSR1: checkpoint (preemption notice)
// SIGUSR2, SIGHUP: the job's own --signal=B:... (SLURM sends it to the batch step, which is this
// proxy, before the time limit or at a preemption): passed on to the workload, the script it
// was meant for, instead of ending the proxy.
volatile std::sig_atomic_t g_forward = 0;

void OnSignal(int sig) {
  if (sig == SIGUSR1) g_usr1 = 1;
  else if (sig == SIGUSR2 || sig == SIGHUP) g_forward = sig;
  else g_term = 1;
}

// Messages for the job's owner go to the job's stderr. A regular file is opened again in append
// mode, so that they interleave with the workload's output instead of overwriting it; anything
// else (/dev/null, a terminal, a FIFO) is written as it is.
class JobLog {
 public:
  explicit JobLog(const std::string& path) {
    struct stat st {};
    if (!path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) fd_ = ::dup(STDERR_FILENO);
  }
  template <typename... Args>
  void operator()(fmt::format_string<Args...> f, Args&&... args) {
    std::string line = "cedana: " + fmt::format(f, std::forward<Args>(args)...) + "\n";
    if (::write(fd_, line.data(), line.size()) < 0) {
    }
  }

 private:
  int fd_ = -1;
};

// The path the workload's supervisor reopens as the job's user for one of our output
// descriptors: a regular file, a character device (/dev/null, a terminal) or a named FIFO. An
// anonymous pipe or a socket has no path to reopen; that is an error saying what it is.
Result<std::string> OutputPath(int fd, const char* name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return ErrnoStatus(errno, fmt::format("the job's {} is not open", name));
  std::error_code ec;
  auto p = std::filesystem::read_symlink(fmt::format("/proc/self/fd/{}", fd), ec);
  bool named = !ec && p.is_absolute();
  if (named && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
    return p.string();
  const char* kind = S_ISSOCK(st.st_mode)   ? "a socket"
                     : S_ISFIFO(st.st_mode) ? "an anonymous pipe"
                                            : "not a file, device or FIFO";
  return FailedPreconditionError(
      fmt::format("the job's {} is {} ({})", name, kind, ec ? "no path" : p.string()));
}

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = ::getenv(name);
  return v && *v ? v : fallback;
}

std::vector<std::string> JobEnvironment() {
  return StartEnvironment({"CEDANA_SLURM_ATTACH", "CEDANA_SLURM_ORIG_ARGV0"});
}

[[noreturn]] void ExecUnmanaged(const std::vector<std::string>& argv, JobLog& log,
                                const std::string& why) {
  log("{}; the job runs without checkpointing", why);
  ExecTask(argv, JobEnvironment(), argv[0]);
  log("cannot exec {}: {}", argv[0], std::strerror(errno));
  ::_exit(127);
}

// job_submit/cedana opened the job's output in append mode, so that a requeue keeps what it
// printed (slurm/batch_script_env.h): at the job's first start the files are emptied, as SLURM's
// default mode would have. Before anything is written to them.
void TruncateOutputAtFirstStart() {
  if (Env(std::string(slurm::kOutputAppendVar).c_str()) != "1" ||
      Env("SLURM_RESTART_COUNT", "0") != "0")
    return;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat st {};
    // A file that cannot be truncated keeps what it held: appended to, nothing is lost.
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && ::ftruncate(fd, 0) != 0) {
    }
  }
}

// Why SLURM sends SIGTERM, as the checkpoint's reason (common/checkpoint_reason.h).
const char* TerminationReason(const Result<JobState>& job) {
  if (!job.has_value()) return "termination";
  if (job->preempted) return "preemption";
  if (job->cancelled) return "scancel";
  if (job->requeueing) return "requeue";
  return "termination";
}

// "2026-12-01 22:40:01 UTC": a checkpoint's time for the job's owner, in the node's zone.
std::string LocalTime(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  char buf[64] = "";
  if (::localtime_r(&t, &tm) != nullptr)
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

// The node daemon said when the dump is expected to end (daemon/dump_queue.h): if that is
// after SLURM ends the job, the owner hears it now, not after the job was lost.
void TellIfLate(const protocol::Message& m, const char* why, JobLog& log) {
  if (m.value("phase", "") != "queued" || m.value("fits", true)) return;
  const int64_t finish = m.value("finish_ms", int64_t{0}),
                deadline = m.value("deadline_ms", int64_t{0});
  log("the checkpoint on {} is not expected to finish in time: {} MiB to dump behind {} other "
      "checkpoint(s) on this node ({} MiB), expected to end at {}, {:.0f} s after SLURM ends the "
      "job at {}. If it does not finish, the job's next run resumes from its newest checkpoint, or "
      "starts fresh",
      why, m.value("bytes", uint64_t{0}) >> 20, m.value("ahead", 0),
      m.value("ahead_bytes", uint64_t{0}) >> 20, LocalTime(finish), (finish - deadline) / 1000.0,
      LocalTime(deadline));
}

// Asks the daemon for a checkpoint (that stops the workload, unless leave_running). Its duration
// in ms once it was committed, nullopt when it failed. `why` is said to the owner, `reason` is
// recorded with the checkpoint; `deadline_ms` (unix ms, 0 = none) is when SLURM ends the job.
std::optional<int64_t> Checkpoint(const std::string& socket, const std::string& id, const char* why,
                                  const char* reason, bool leave_running, int64_t deadline_ms,
                                  JobLog& log) {
  auto started = std::chrono::steady_clock::now();
  protocol::DaemonRequest req = protocol::RequestOf(protocol::DaemonOp::kDump, id);
  req.leave_running = leave_running;
  req.reason = reason;
  req.deadline_ms = deadline_ms;
  auto r = protocol::CallDaemon(socket, protocol::EncodeDaemonRequest(req),
                                [&](const protocol::Message& m) { TellIfLate(m, why, log); });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!r.has_value()) {
    // Something in the job cannot be checkpointed: trying again will not help, so say what
    // and where, and what happens to the job instead.
    if (r.error().code() == Code::kUnsupported)
      log("checkpoint refused: {} (on {}; the job runs on until SLURM ends it, and then starts "
          "from its newest checkpoint, or fresh)",
          r.error().message(), why);
    else log("checkpoint on {} failed after {:.1f} s: {}", why, secs, r.error().message());
    return std::nullopt;
  }
  Result<protocol::CheckpointSummary> c = protocol::ParseDumpReply(*r);
  if (!c.has_value()) {
    log("checkpoint on {}: the node daemon's reply: {}", why, c.error().message());
    return std::nullopt;
  }
  log("checkpoint {} of label {} taken on {} in {:.1f} s ({} bytes stored)", c->id, c->label, why,
      secs, c->stored_bytes);
  return c->duration_ms;
}

}  // namespace

int RunAttach(const std::vector<std::string>& argv) {
  TruncateOutputAtFirstStart();
  Result<std::string> out = OutputPath(STDOUT_FILENO, "stdout");
  Result<std::string> err = OutputPath(STDERR_FILENO, "stderr");
  std::string err_path = err.has_value() ? *err : "";
  JobLog log(err_path);
  std::string job_id = Env("SLURM_JOB_ID", "0");
  std::string label = Env("CEDANA_CHECKPOINT", "job-" + job_id);
  if (Status s = ValidateLabel(label); !s.ok()) ExecUnmanaged(argv, log, s.message());
  if (!out.has_value()) ExecUnmanaged(argv, log, out.error().message());
  const std::string out_path = *out;
  if (std::string recovered = Env("CEDANA_RECOVERED"); !recovered.empty())
    log("settings recovered from the batch script: {}", recovered);

  auto loaded = LoadConfig(ConfigPath(ProcessEnvironment()), ProcessEnvironment());
  if (!loaded.has_value())
    ExecUnmanaged(argv, log, "configuration error: " + loaded.error().message());
  const std::string socket = loaded->config.socket_path;

  std::error_code ec;
  protocol::DaemonRequest req = protocol::RequestOf(protocol::DaemonOp::kRun);
  req.argv = argv;
  req.env = JobEnvironment();
  req.cwd = std::filesystem::current_path(ec).string();
  req.label = label;
  req.job_id = job_id;
  req.stdout_path = out_path;
  req.stderr_path = err_path.empty() ? out_path : err_path;
  req.restore_label = true;
  req.owner_pid = ::getpid();
  if (argv[0].size() > 13 && argv[0].rfind("/slurm_script") == argv[0].size() - 13)
    req.slurm_script = argv[0];
  auto r = protocol::CallDaemon(socket, protocol::EncodeDaemonRequest(req));
  if (!r.has_value()) ExecUnmanaged(argv, log, "node daemon: " + r.error().message());
  Result<protocol::StartedWorkload> started = protocol::ParseStartedWorkload(*r);
  // The daemon started the workload: a reply we cannot read must not start it a second time.
  if (!started.has_value()) log("the node daemon's reply: {}", started.error().message());
  protocol::StartedWorkload w;
  if (started.has_value()) w = std::move(started).value();
  else w.id = r->value("id", "");  // what it needs to follow the workload
  const std::string& id = w.id;
  for (const std::string& s : w.skipped) log("skipped checkpoint {}", s);
  if (!w.checkpoint_id.empty()) {
    // One line per resume: with the output kept across requeues, it marks where each run began.
    log("resumed from checkpoint {} taken at {}{} (job {}, restart {}, label {})", w.checkpoint_id,
        LocalTime(w.checkpoint_created_at_ms),
        w.checkpoint_reason.empty() ? "" : " on " + ReasonPhrase(w.checkpoint_reason), job_id,
        Env("SLURM_RESTART_COUNT", "0"), label);
  } else {
    if (!w.fresh_reason.empty()) log("{}; starting fresh", w.fresh_reason);
    if (!w.restore_error.empty())
      log("no checkpoint of label {} could be restored ({}); starting fresh", label,
          w.restore_error);
    log("job {} started under cedana as workload {} (label {})", job_id, w.id, label);
  }

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGUSR1, &sa, nullptr);
  ::sigaction(SIGUSR2, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  ::signal(SIGCONT, SIG_IGN);

  // Watch the workload itself too: if the daemon is down for good we still see it end.
  int workload_fd = static_cast<int>(::syscall(SYS_pidfd_open, w.pid, 0));
  SlurmJob job(static_cast<uint32_t>(std::stoul(job_id)));
  bool checkpointed = false, tried_preempt = false, tried_term = false, tried_limit = false;
  // At the time limit (time_limit.h): the site's policy comes from the node daemon's config.
  TimeLimitPolicy limits;
  if (w.time_limit) {
    limits.site_allows_requeue = w.time_limit->requeue;
    limits.max_restarts = w.time_limit->max_restarts;
    limits.margin_seconds = w.time_limit->margin_seconds;
  }
  const bool requeue_asked = Env("CEDANA_REQUEUE_ON_TIMEOUT") == "1";
  // SLURM's notice of preemption (job_polling.h): job_submit/cedana gave this job SIGUSR1 at
  // preemption, and slurmctld sends it. Then slurmctld is asked about the job only seldom.
  // Asked once here, with the grace time: not at a preemption, when slurmctld is busiest.
  Result<SlurmctldSettings> settings = job.LoadSlurmctldSettings();
  JobDeadlines deadlines;
  if (settings.has_value()) deadlines.kill_wait_seconds = settings->kill_wait_seconds;
  if (auto grace = job.GraceSeconds(Env("SLURM_JOB_PARTITION")); grace.has_value())
    deadlines.grace_seconds = *grace;
  bool preempt_notice = false;
  if (Env(std::string(slurm::kPreemptNoticeVar).c_str()) == "USR1") {
    preempt_notice = settings.has_value() && settings->sends_preempt_notice;
    if (!preempt_notice)
      log("slurmctld does not signal preemptions (SlurmctldParameters lacks "
          "preempt_send_user_signal: "
          "run `cedana slurm setup` on the controller); asking it about job {} twice a second "
          "instead",
          job_id);
  }
  int64_t last_checkpoint_ms = r->value("checkpoint_duration_ms", int64_t{0});
  int unreachable_after_exit = 0;
  auto next_poll = std::chrono::steady_clock::now();
  constexpr auto kInspectEvery = std::chrono::seconds(10);
  auto next_inspect = next_poll + kInspectEvery;
  for (;;) {
    if (g_term && !tried_term && !checkpointed) {
      tried_term = true;
      const std::time_t now = std::time(nullptr);
      Result<JobState> s = job.Load();
      // A preemption without SLURM's notice: SIGTERM starts the grace time.
      const int64_t deadline = s.has_value() && s->preempted
                                   ? deadlines.AfterPreemption(s->preempt_time)
                                   : deadlines.AfterSigterm(now);
      checkpointed =
          Checkpoint(socket, id, "SIGTERM", TerminationReason(s), false, deadline, log).has_value();
    }
    if (g_term && checkpointed) return 0;
    if (int sig = g_forward; sig != 0) {
      g_forward = 0;
      protocol::DaemonRequest kill = protocol::RequestOf(protocol::DaemonOp::kKill, id);
      kill.signal_number = sig;
      if (auto f = protocol::CallDaemon(socket, protocol::EncodeDaemonRequest(kill));
          !f.has_value())
        log("passing signal {} on to the workload failed: {}", sig, f.error().message());
    }
    bool preempt = g_usr1 != 0;
    std::time_t preempt_began = std::time(nullptr);  // SLURM's notice comes as it begins
    std::optional<TimeLimitInput> limit_in;          // set when the job was just asked about
    if (!checkpointed && std::chrono::steady_clock::now() >= next_poll) {
      if (auto s = job.Load(); s.has_value()) {
        if (!preempt && s->preempted) preempt_began = s->preempt_time;
        preempt = preempt || s->preempted;
        limit_in = TimeLimitInput{std::time(nullptr), s->end_time, last_checkpoint_ms,
                                  requeue_asked, s->restart_count};
      }
      const std::time_t acts_at = limit_in && !tried_limit ? TimeLimitActsAt(*limit_in, limits) : 0;
      next_poll = std::chrono::steady_clock::now() +
                  NextPollIn(preempt_notice, std::time(nullptr), acts_at);
    }
    if (preempt && !tried_preempt && !checkpointed) {
      tried_preempt = true;
      // Stay alive after the checkpoint: SLURM requeues a preempted job when its grace time
      // ends; a batch step that exited by itself would end the job instead.
      checkpointed = Checkpoint(socket, id, "preemption", "preemption", false,
                                deadlines.AfterPreemption(preempt_began), log)
                         .has_value();
    }
    if (limit_in && !checkpointed && !tried_limit) {
      const TimeLimitInput& in = *limit_in;
      TimeLimitAction action = DecideTimeLimit(in, limits);
      if (action != TimeLimitAction::kWait) {
        tried_limit = true;
        if (std::string why = WhyNoRequeue(in, limits); !why.empty())
          log("not requeued at the time limit: {}", why);
        bool requeue = action == TimeLimitAction::kCheckpointAndRequeue;
        std::optional<int64_t> took =
            Checkpoint(socket, id, "its time limit", "time_limit", !requeue,
                       static_cast<int64_t>(in.end_time) * 1000, log);
        if (took) last_checkpoint_ms = *took;
        if (took && requeue) {
          // Stopped at the checkpoint: SLURM ends this run and starts the job again, and the
          // next run resumes from it. Stay until SLURM stops us, as after a preemption.
          checkpointed = true;
          if (Status q = job.Requeue(); q.ok())
            log("job {} requeued at its time limit (restart {} of at most {}); it resumes from the "
                "checkpoint",
                job_id, in.restart_count + 1, limits.max_restarts);
          else
            log("requeueing at the time limit failed ({}); resubmit the job to resume it",
                q.message());
        }
      }
    }
    // The workload's pidfd says when it ends; only then (and every 10 s, for a dump nobody told
    // us of) is the daemon asked: 200 jobs on a node asking 5 times a second each cost the
    // node daemon more than their checkpoints.
    pollfd p{workload_fd, POLLIN, 0};
    bool gone = workload_fd >= 0 && ::poll(&p, 1, 200) > 0;
    if (workload_fd < 0 || gone) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto now = std::chrono::steady_clock::now();
    if (!checkpointed && (gone || workload_fd < 0 || now >= next_inspect)) {
      next_inspect = now + kInspectEvery;
      auto w = protocol::CallDaemon(socket, protocol::RequestOf(protocol::DaemonOp::kInspect, id),
                                    protocol::ParseInspectReply);
      if (w.has_value()) {
        if (w->status == "exited" || w->status == "failed") return w->exit_code;
        if (w->status == "checkpointed") checkpointed = true;  // e.g. `cedana dump` by the admin
      } else if (gone && ++unreachable_after_exit > 50) {
        log("the workload ended while the node daemon is unreachable ({}); its exit status is "
            "unknown",
            w.error().message());
        return 1;
      }
    }
  }
}

}  // namespace cedana::job_proxy
