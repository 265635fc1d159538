// CriuClient: the only code that talks to CRIU. It drives `criu swrk` (CRIU's RPC over a
// SOCK_SEQPACKET socketpair) so that every call has a deadline we enforce ourselves: past it
// CRIU is killed, and for a dump the tasks it had seized are continued (never left frozen).
// See docs/architecture.md for why swrk rather than libcriu. Thread-safe: each call spawns its
// own CRIU process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/subprocess.h"
#include "engine/image_streamer.h"

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
  // The restored tree stays stopped (SIGSTOP) until the caller continues it (RestoreStreaming).
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

class CriuClient {
 public:
  // kNotFound when no criu binary is found, kFailedPrecondition when it is older than 4.0.
  static Result<CriuClient> Create(CriuSettings settings);

  const CriuSettings& settings() const { return settings_; }
  // "4.1.1"
  Result<std::string> Version() const;

  // On failure: the tree keeps running (CRIU resumes it; past the deadline we kill CRIU and
  // SIGCONT the tree), and the error carries the tail of images_dir/dump.log.
  Status Dump(const DumpRequest& request) const;
  // A dump through CRIU's image streamer (criu --stream): CRIU hands each image file to
  // `receiver` as it writes it (ImageCapture), so images_dir keeps only CRIU's log and stats.
  // Runs the criu command line rather than swrk: CRIU 4.1's RPC service cannot stream (with
  // `stream` set through an RPC config file it aborts in img_streamer_init). The guarantees of
  // Dump hold: past the deadline CRIU is killed and the tree continued; a receiver that fails
  // closes CRIU's pipes, CRIU fails and resumes the tree, and the receiver's error is returned.
  // While the receiver blocks, CRIU waits with the tree frozen.
  Status DumpStreaming(const DumpRequest& request, ImageReceiver* receiver) const;
  // Returns the host pid of the restored root. On failure CRIU kills what it had restored.
  Result<pid_t> Restore(const RestoreRequest& request) const;
  // A restore through CRIU's image streamer (criu restore --stream): CRIU asks the server on
  // <images_dir>/streamer-serve.sock (ImageServe, run by the caller's peer) for every image.
  // The criu command line, as for DumpStreaming; past the deadline CRIU is killed, and what it
  // had restored is left to the caller (its subreaper) to reap.
  Result<pid_t> RestoreStreaming(const RestoreRequest& request) const;

 private:
  explicit CriuClient(CriuSettings settings) : settings_(std::move(settings)) {}
  CriuSettings settings_;
};

// kFailedPrecondition unless `binary` carries the file capabilities unprivileged mode needs,
// naming the command that gives them.
Status CheckUnprivilegedCapable(const std::string& binary);

// The last `lines` lines of a CRIU log, for error messages.
std::string LogTail(const std::string& path, int lines = 12);
// Finds criu: `configured` when set, else PATH, /usr/local/bin/criu, /opt/cedana/criu/sbin/criu.
Result<std::string> FindCriuBinary(const std::string& configured);

}  // namespace cedana::engine
