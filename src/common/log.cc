#include "common/log.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

namespace cedana::log {
namespace {

std::mutex& SinkMutex() {
  static std::mutex mu;
  return mu;
}
Sink& CurrentSink() {
  static Sink sink;
  return sink;
}
std::atomic<Level> g_level{Level::kInfo};

std::string FormatLine(Level level, std::string_view line) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
  return fmt::format("{} {:<5} {}\n", stamp, NameOf(kLevelNames, level), line);
}

}  // namespace

void SetSink(Sink sink) {
  std::lock_guard lock(SinkMutex());
  CurrentSink() = std::move(sink);
}

void SetLevel(Level level) { g_level = level; }

Sink StderrAndFileSink(const std::string& path) {
  // One shared fd: O_APPEND keeps lines whole across processes (daemon and supervisors).
  auto fd = std::make_shared<int>(-1);
  if (!path.empty()) *fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  return [fd](Level level, std::string_view line) {
    std::string text = FormatLine(level, line);
    if (::write(STDERR_FILENO, text.data(), text.size()) < 0) {
      // stderr gone (daemon detached): the file still gets the line.
    }
    if (*fd >= 0 && ::write(*fd, text.data(), text.size()) < 0) {
      // Nowhere left to report a failed log write.
    }
  };
}

void Write(Level level, std::string_view line) {
  if (level < g_level.load()) return;
  std::lock_guard lock(SinkMutex());
  if (CurrentSink()) {
    CurrentSink()(level, line);
    return;
  }
  std::string text = FormatLine(level, line);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace cedana::log
