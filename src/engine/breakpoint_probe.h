// Probes whether hardware breakpoints work on this machine. CRIU's parasite cure sets a debug-
// register breakpoint and waits for it; on VMs without working debug registers it waits forever
// with the task frozen (docs/architecture.md, "CRIU: swrk RPC, deadlines, and the breakpoint
// fallback"). Where the probe fails, CRIU must run with its no-breakpoint fallback
// (CRIU_FAULT=130). Run once at daemon start; thread-safe.
#pragma once

#include "common/result.h"

namespace cedana::engine {

// true: a breakpoint set through PTRACE_POKEUSER on DR0/DR7 trapped in a traced child.
// false: it did not trap, or debug registers cannot be set. Errors only when fork/ptrace
// themselves are unavailable.
Result<bool> HardwareBreakpointsWork();

}  // namespace cedana::engine
