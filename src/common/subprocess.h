// Subprocess: the one place in the tree that forks. Everything the child needs (argv, the
// environment, the program's path, the fd layout) is prepared before the fork; after it the child
// makes only async-signal-safe calls (dup2, fcntl, close_range, setsid, setgroups, setgid, setuid,
// chdir, execve, write, _exit), so a fork from the multi-threaded node daemon cannot deadlock on a
// lock another thread held. A step that fails in the child before exec comes back to Start as a
// Status naming the step and its errno (over a close-on-exec pipe): no exit code carries meaning
// across the process boundary.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/status.h"

namespace cedana::subprocess {

// Who the child runs as: supplementary groups, then gid, then uid.
struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

struct Command {
  std::vector<std::string> argv;
  // The file executed: a path, or a name looked up on the PATH of the child's environment.
  // Empty: argv[0].
  std::string program;
  // KEY=VALUE; nullopt: this process's environment.
  std::optional<std::vector<std::string>> env;
  // Set in the child's environment over what `env` gives (KEY=VALUE).
  std::vector<std::string> extra_env;
  // {fd in the child, fd here}. 0, 1 and 2 not named here are /dev/null; no other fd of ours
  // reaches the program.
  std::vector<std::pair<int, int>> fds;
  std::optional<Identity> identity;
  std::string cwd;  // empty: ours
  bool new_session = false;
  // Reparented to init (a double fork): nobody's child but init's, so that the caller may exit or
  // restart without touching it and never has a zombie to reap. Start returns its pid all the same.
  bool detached = false;
  // Namespaces of its own (CLONE_NEW* flags; the child is then the init of a new PID namespace).
  unsigned long namespaces = 0;
  // Joins the PID and IPC namespaces of the process this pidfd names (-1: none) as an orphan of
  // that namespace's init: the program is forked twice inside it, so that its parent there is
  // the init, and a dump of the init's tree includes it. Start returns its pid in our
  // namespace all the same. Excludes `detached` and `namespaces`.
  int join_namespaces_of = -1;
  // cgroup.procs files, open for writing: the child moves itself into each before it forks
  // or execs anything.
  std::vector<int> cgroup_procs;
  // Resource limits set in the child (RLIMIT_* and its soft and hard values).
  std::vector<std::pair<int, std::pair<uint64_t, uint64_t>>> rlimits;
  // Ignored in the child; every other signal has its default action and none is blocked (the
  // node daemon blocks SIGTERM and SIGINT, and a mask survives exec).
  std::vector<int> ignored_signals;
};

// How a child ended.
struct Exit {
  bool signaled = false;
  int code = 0;  // the exit code, or the signal that killed it
  bool ok() const { return !signaled && code == 0; }
  std::string Describe() const;  // "exited with code 3", "killed by signal 9 (Killed)"
};

// Starts the command and returns the program's pid once it has been exec'd. The caller waits for
// it (unless detached).
Result<pid_t> Start(const Command& command);

// Waits for `pid` to end (EINTR retried).
Result<Exit> Wait(pid_t pid);

// What Run keeps of the child's output.
enum class Output { kDiscard, kStdout, kStdoutAndStderr };

// Starts the command, reads what `keep` says into `output` until the child closes it, and waits.
Result<Exit> Run(const Command& command, Output keep = Output::kDiscard,
                 std::string* output = nullptr);

// Raises this process's soft limit of open files to its hard limit, for a process that may hold
// many files open (the node daemon: a file per chunk of an image CRIU reads in place). Every
// program started afterwards gets the soft limit this process had before: what it starts does
// not notice (systemd keeps the soft limit at 1024 for programs that still use select()).
Status RaiseOwnFileLimit();

// Forks a child that runs `body` (a plain function: no captures, so nothing to copy after the
// fork; it must itself make only async-signal-safe calls) and _exits with what it returns. For
// probes that need a child of ours, not a program.
Result<pid_t> ForkRunning(int (*body)());

// The path execve is given for `name` on `path_list` (colon-separated): `name` itself when it
// holds a slash, else the first regular file with an execute bit.
Result<std::string> FindProgram(const std::string& name, const std::string& path_list);

}  // namespace cedana::subprocess
