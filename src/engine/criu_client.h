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
#include "engine/checkpoint_engine.h"
#include "engine/criu_types.h"
#include "engine/image_streamer.h"

namespace cedana::engine {

class CriuClient : public CheckpointEngine {
 public:
  // kNotFound when no criu binary is found, kFailedPrecondition when it is older than 4.0.
  static Result<CriuClient> Create(CriuSettings settings);
  // For a binary the daemon found and checked with Create (`settings.binary` resolved): a
  // restore supervisor uses it, which would otherwise run one more `criu swrk` per restore
  // (measured: 0.1-0.2 s of a 1 s restore with caches dropped).
  static CriuClient OfCheckedBinary(CriuSettings settings) {
    return CriuClient(std::move(settings));
  }

  const CriuSettings& settings() const override { return settings_; }
  // "4.1.1"
  Result<std::string> Version() const;

  // On failure: the tree keeps running (CRIU resumes it; past the deadline we kill CRIU and
  // SIGCONT the tree), and the error carries the tail of images_dir/dump.log.
  Status Dump(const DumpRequest& request) const override;
  // A dump through CRIU's image streamer (criu --stream): CRIU hands each image file to
  // `receiver` as it writes it (ImageCapture), so images_dir keeps only CRIU's log and stats.
  // Runs the criu command line rather than swrk: CRIU 4.1's RPC service cannot stream (with
  // `stream` set through an RPC config file it aborts in img_streamer_init). The guarantees of
  // Dump hold: past the deadline CRIU is killed and the tree continued; a receiver that fails
  // closes CRIU's pipes, CRIU fails and resumes the tree, and the receiver's error is returned.
  // While the receiver blocks, CRIU waits with the tree frozen.
  Status DumpDirect(const DumpRequest& request, ImageReceiver* receiver) const override;
  // Returns the host pid of the restored root. On failure CRIU kills what it had restored.
  Result<pid_t> Restore(const RestoreRequest& request) const;
  // A restore through CRIU's image streamer (criu restore --stream): CRIU asks the server on
  // <images_dir>/streamer-serve.sock (ImageServe, run by the caller's peer) for every image.
  // The criu command line, as for DumpDirect; past the deadline CRIU is killed, and what it
  // had restored is left to the caller (its subreaper) to reap.
  Result<pid_t> RestoreDirect(const RestoreRequest& request) const;

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
