// A test hook at the named steps of long operations: with CEDANA_TEST_PAUSE_AT=<point> in the
// daemon's environment, PauseIfAsked(<point>) logs "test: paused at <point>" and blocks that
// thread forever, so that a test can kill the daemon exactly there and check what a restarted
// daemon puts back (tests/integration/crash_test.sh). Without the variable it does nothing.
#pragma once

#include <string_view>

namespace cedana {

void PauseIfAsked(std::string_view point);

}  // namespace cedana
