#include "cli/cli_context.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

namespace cedana::cli {

CliContext::CliContext()
    : loaded_(LoadConfig(ConfigPath(ProcessEnvironment()), ProcessEnvironment())) {}

void CliContext::ReloadConfig() {
  loaded_ = LoadConfig(ConfigPath(ProcessEnvironment()), ProcessEnvironment());
}

const Config* CliContext::config() {
  if (!loaded_.has_value()) {
    std::fprintf(stderr, "cedana: %s\n", loaded_.error().ToString().c_str());
    exit_code_ = 2;
    return nullptr;
  }
  return &loaded_->config;
}

void CliContext::ReportConfigWarnings() const {
  if (!loaded_.has_value()) return;
  for (const std::string& w : loaded_->warnings)
    std::fprintf(stderr, "cedana: warning: %s\n", w.c_str());
}

void CliContext::Fail(const Status& status) {
  std::fprintf(stderr, "cedana: error: %s\n", status.ToString().c_str());
  exit_code_ = status.code() == Code::kInvalidArgument ? 2 : 1;
}

std::optional<protocol::Message> CliContext::Call(const protocol::DaemonRequest& request,
                                                  bool show_progress) {
  const Config* cfg = config();
  if (cfg == nullptr) return std::nullopt;
  bool tty = show_progress && ::isatty(STDERR_FILENO);
  bool drew = false;
  auto started = std::chrono::steady_clock::now();
  auto on_progress = [&](const protocol::Message& p) {
    if (!tty) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    uint64_t done = p.value("done", uint64_t{0}), total = p.value("total", uint64_t{0});
    std::string line = fmt::format("{:<10} {:6.1f}s", p.value("phase", ""), secs);
    if (total > 0)
      line += fmt::format("  {:3.0f}%  {} / {}", 100.0 * done / total, HumanBytes(done),
                          HumanBytes(total));
    else if (done > 0)
      line += fmt::format("  {}", HumanBytes(done));  // a direct dump: no total until CRIU is done
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    drew = true;
  };
  Result<protocol::Message> r =
      protocol::CallDaemon(cfg->socket_path, protocol::EncodeDaemonRequest(request), on_progress);
  if (drew) std::fprintf(stderr, "\r\033[K");
  if (!r.has_value()) {
    Fail(r.error());
    return std::nullopt;
  }
  return std::move(r).value();
}

Result<protocol::Message> CliContext::Ask(const protocol::DaemonRequest& request) const {
  if (!loaded_.has_value()) return loaded_.error();
  return protocol::CallDaemon(loaded_->config.socket_path, protocol::EncodeDaemonRequest(request));
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string HumanTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  time_t secs = static_cast<time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

off_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

int FollowWorkload(CliContext& ctx, const std::string& id, const std::string& path, off_t offset) {
  int fd = -1;
  auto drain = [&] {
    if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[65536];
    ssize_t n;
    while ((n = ::pread(fd, buf, sizeof buf, offset)) > 0) {
      fwrite(buf, 1, static_cast<size_t>(n), stdout);
      offset += n;
    }
    fflush(stdout);
  };
  for (;;) {
    drain();
    auto w = ctx.Ask(RequestOf(protocol::DaemonOp::kInspect, id), protocol::ParseInspectReply);
    if (!w.has_value()) {
      ctx.Fail(w.error());
      return 1;
    }
    const std::string& status = w->status;
    if (status != "running" && status != "starting") {
      drain();
      if (status == "checkpointed") {
        std::fprintf(stderr, "cedana: workload %s was checkpointed and stopped\n", id.c_str());
        return 0;
      }
      return status.empty() ? 1 : w->exit_code;  // empty: its records are unreadable
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace cedana::cli
