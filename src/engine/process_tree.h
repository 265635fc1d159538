// ProcessTree: the pids of a process and all its descendants, read from /proc. Used to thaw
// (SIGCONT) or inspect a workload's tree. Stateless functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
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
// Polls until `pid` is gone or a zombie, at most `timeout`; false if it still runs.
bool WaitUntilGone(pid_t pid, std::chrono::milliseconds timeout);

}  // namespace cedana::engine
