// A test hook at the named steps of long operations. With CEDANA_TEST_PAUSE_AT=<point> in the
// daemon's environment, FaultAt(<point>) logs "test: paused at <point>" and blocks that thread
// forever, so that a test can kill the daemon exactly there (tests/integration/crash_test.sh);
// with <point>:<seconds> it blocks that long and then fails the step, as a step that hangs and
// gives up would (the grace-time test of tests/slurm/slurm_test.sh), where the caller can roll
// back (a dump before its commit); elsewhere the caller only pauses. Without the variable, or at
// any other point, it returns OK at once.
#pragma once

#include <string_view>

#include "common/status.h"

namespace cedana {

Status FaultAt(std::string_view point);

}  // namespace cedana
