#include "common/fault_point.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/log.h"

namespace cedana {

Status FaultAt(std::string_view point) {
  const char* env = std::getenv("CEDANA_TEST_PAUSE_AT");
  if (env == nullptr) return OkStatus();
  std::string_view at = env;
  if (at.substr(0, point.size()) != point) return OkStatus();
  std::string_view rest = at.substr(point.size());
  if (rest.empty()) {
    log::Warn("test: paused at {} (CEDANA_TEST_PAUSE_AT)", point);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (rest[0] != ':') return OkStatus();  // another point with this one's name as a prefix
  int seconds = std::atoi(std::string(rest.substr(1)).c_str());
  log::Warn("test: paused at {} for {} s, then failing it (CEDANA_TEST_PAUSE_AT)", point, seconds);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  return AbortedError(std::string("test: step ") + std::string(point) + " failed after its pause");
}

}  // namespace cedana
