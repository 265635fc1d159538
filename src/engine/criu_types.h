// The requests and settings of a CRIU call (engine/criu_client.h, engine/checkpoint_engine.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/subprocess.h"

namespace cedana::engine {

struct CriuSettings {
  std::string binary;                 // absolute path of criu
  std::chrono::seconds timeout{120};  // deadline of one call
  bool no_breakpoints = false;        // run CRIU with CRIU_FAULT=130 (no hw breakpoints)
};

// Unprivileged mode: CRIU runs as the workload's owner, with only the capabilities its binary
// carries (setcap CAP_SYS_PTRACE,CAP_DAC_READ_SEARCH,CAP_CHECKPOINT_RESTORE), and is told so
// (criu --unprivileged). Unset: CRIU runs as the caller (root).
using RunAs = subprocess::Identity;

struct DumpRequest {
  pid_t pid = 0;               // root of the tree (init of the workload's pid namespace)
  std::string images_dir;      // empty dir, created by the caller
  bool leave_running = false;  // the tree continues after the dump
  bool leave_stopped = false;  // the tree stays stopped (SIGSTOP) after the dump
  bool shell_job = false;      // the tree's session leader is outside it
  // Connected TCP sockets (daemon/tcp_policy.h): dumped in repair mode, with CRIU's nftables
  // network lock on while it dumps (engine/network_lock.h), or marked to be restored closed.
  bool tcp_established = false;
  bool tcp_close = false;
  bool file_locks = true;
  std::optional<RunAs> run_as;
};

struct RestoreRequest {
  std::string images_dir;
  // CRIU's inherit-fd: an object CRIU would restore (key "pipe:[1234]") is replaced by this fd
  // of the caller.
  std::vector<std::pair<std::string, int>> inherit_fds;
  bool shell_job = false;
  // The restored root becomes the caller's child (CLONE_PARENT) rather than CRIU's.
  bool rst_sibling = true;
  // The restored tree stays stopped (SIGSTOP) until the caller continues it (RestoreDirect).
  bool leave_stopped = false;
  // As the dump had them (the checkpoint records which).
  bool tcp_established = false;
  bool tcp_close = false;
  std::optional<RunAs> run_as;
  // The filesystem identity CRIU opens every file of the images with (descriptors, mappings,
  // executable, cwd, FIFOs, unix socket paths), without following symlinks in regular files'
  // paths; ghost and link-remapped files are then refused. Our CRIU build reads it from
  // CRIU_RESTORE_FS_OWNER. Unset: CRIU opens them as the user it runs as (root: anything).
  std::optional<RunAs> files_owner;
};

}  // namespace cedana::engine
