#include "engine/breakpoint_probe.h"

#include <signal.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "common/subprocess.h"

namespace cedana::engine {
namespace {

// The breakpoint target. noinline + a volatile side effect keep it a real, callable address.
volatile int g_probe_sink = 0;
__attribute__((noinline)) void ProbeTarget() { g_probe_sink = g_probe_sink + 1; }

// Waits for `pid` to change state, up to `timeout`; false on timeout.
bool WaitWithTimeout(pid_t pid, int* status, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

}  // namespace

Result<bool> HardwareBreakpointsWork() {
#if defined(__x86_64__)
  Result<pid_t> forked = subprocess::ForkRunning([] {
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) return 2;
    ::raise(SIGSTOP);
    ProbeTarget();  // traps here when the breakpoint works
    return 0;
  });
  if (!forked.has_value()) return Status(forked.error()).WithContext("the breakpoint probe");
  pid_t child = *forked;
  auto kill_child = [child] {
    ::kill(child, SIGKILL);
    int st;
    ::waitpid(child, &st, 0);
  };
  int status = 0;
  if (!WaitWithTimeout(child, &status, std::chrono::seconds(5)) || !WIFSTOPPED(status)) {
    kill_child();
    return UnavailableError("breakpoint probe: child did not stop");
  }
  // DR0 = target address; DR7 bit 0 = local enable of DR0, condition 00 (execute), length 00.
  long dr0 = offsetof(struct user, u_debugreg[0]);
  long dr7 = offsetof(struct user, u_debugreg[7]);
  bool set = ::ptrace(PTRACE_POKEUSER, child, reinterpret_cast<void*>(dr0),
                      reinterpret_cast<void*>(&ProbeTarget)) == 0 &&
             ::ptrace(PTRACE_POKEUSER, child, reinterpret_cast<void*>(dr7),
                      reinterpret_cast<void*>(1L)) == 0;
  if (!set) {
    kill_child();
    return false;
  }
  ::ptrace(PTRACE_CONT, child, nullptr, nullptr);
  bool trapped = WaitWithTimeout(child, &status, std::chrono::seconds(5)) && WIFSTOPPED(status) &&
                 WSTOPSIG(status) == SIGTRAP;
  kill_child();
  return trapped;
#else
  return true;  // other architectures: assume CRIU's default path works
#endif
}

}  // namespace cedana::engine
