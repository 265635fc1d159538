// The one logging facade (docs/architecture.md, "Code conventions"). Shared code logs through it
// whichever process it is loaded into; the process picks the sink at start-up. Thread-safe.
#pragma once

#include <fmt/format.h>
#include <functional>
#include <string>
#include <string_view>

#include "common/named_values.h"

namespace cedana::log {

enum class Level { kDebug = 0, kInfo, kWarn, kError };
inline constexpr NamedValue<Level> kLevelNames[] = {{"debug", Level::kDebug},
                                                    {"info", Level::kInfo},
                                                    {"warn", Level::kWarn},
                                                    {"error", Level::kError}};

// Where lines go. The default sink writes to stderr at level info.
using Sink = std::function<void(Level, std::string_view line)>;

void SetSink(Sink sink);
void SetLevel(Level level);
// A sink that writes "<time> <level> <line>" to stderr and, when path is not empty, appends to
// that file as well.
Sink StderrAndFileSink(const std::string& path);

void Write(Level level, std::string_view line);

template <typename... Args>
void Debug(fmt::format_string<Args...> fmt, Args&&... args) {
  Write(Level::kDebug, fmt::format(fmt, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> fmt, Args&&... args) {
  Write(Level::kInfo, fmt::format(fmt, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> fmt, Args&&... args) {
  Write(Level::kWarn, fmt::format(fmt, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> fmt, Args&&... args) {
  Write(Level::kError, fmt::format(fmt, std::forward<Args>(args)...));
}

}  // namespace cedana::log
