// UnixMillis: the wall clock as unix milliseconds, the unit of every time the daemon, the
// controller and their messages exchange (created_at_ms, deadline_ms ...).
#pragma once

#include <chrono>
#include <cstdint>

namespace cedana {

inline int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace cedana
