// ProcessTree: the pids of a process and all its descendants, read from /proc. Used to thaw
// (SIGCONT) or inspect a workload's tree. Stateless functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <chrono>

#include "common/result.h"

namespace cedana::engine {

// root first, then descendants (breadth first). kNotFound when root does not exist.
Result<std::vector<pid_t>> ProcessTreeOf(pid_t root);
// Sends `sig` to every process of the tree; returns how many got it.
int SignalTree(pid_t root, int sig);
// The process state letter from /proc/<pid>/stat ('R', 'S', 'T', 't', 'Z'...), or 0.
char ProcessState(pid_t pid);
// When it started (clock ticks after boot, /proc/<pid>/stat field 22): with the pid, which
// process it is (a pid can be reused). 0 when it is gone.
uint64_t ProcessStartTime(pid_t pid);
// The number of a /proc/<pid>/status line ("TracerPid", "VmRSS" in kB); nullopt when the process
// or the line is missing.
std::optional<uint64_t> StatusNumber(pid_t pid, std::string_view key);
// Its pid in its own (innermost) PID namespace, the last field of /proc/<pid>/status's NSpid;
// 0 when it is gone.
pid_t NamespacePid(pid_t pid);
// The process of the tree of `root` whose pid in its namespace is `ns_pid`, by its pid here;
// 0 if none is.
pid_t TreeProcessWithNamespacePid(pid_t root, pid_t ns_pid);
// The resident memory of the tree (VmRSS summed, so pages shared between its processes count
// once per process): about what a dump writes. 0 when root does not exist.
uint64_t TreeResidentBytes(pid_t root);
// Polls until `pid` is gone and its parent reaped it, at most `timeout`: a zombie still holds
// its pid, and a restore with the original pids (unprivileged mode) right after a dump failed on
// it ("Can't fork for P: File exists"). True when it is gone, or dead but not yet reaped at the
// timeout (a parent that does not reap); false if it still runs.
bool WaitUntilGone(pid_t pid, std::chrono::milliseconds timeout);

}  // namespace cedana::engine
