#include "common/fault_point.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/log.h"

namespace cedana {

void PauseIfAsked(std::string_view point) {
  const char* at = std::getenv("CEDANA_TEST_PAUSE_AT");
  if (at == nullptr || point != at) return;
  log::Warn("test: paused at {} (CEDANA_TEST_PAUSE_AT)", point);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace cedana
