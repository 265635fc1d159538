// CheckpointEngine: what the node daemon's checkpoint core asks of CRIU, as an interface so that
// the core's steps and rollbacks can be unit-tested with an engine that fails where a test says
// (daemon/checkpointer_test.cc). CriuClient is the one real implementation; restores run CRIU
// in the workload's supervisor (daemon/workload_launcher.h), not here.
#pragma once

#include "common/status.h"
#include "engine/criu_types.h"
#include "engine/image_streamer.h"

namespace cedana::engine {

class CheckpointEngine {
 public:
  virtual ~CheckpointEngine() = default;

  virtual const CriuSettings& settings() const = 0;
  // CriuClient::Dump and CriuClient::DumpDirect state the guarantees every engine keeps: on
  // failure the tree runs (never left frozen) and nothing of it is half-done on CRIU's side.
  virtual Status Dump(const DumpRequest& request) const = 0;
  virtual Status DumpDirect(const DumpRequest& request, ImageReceiver* receiver) const = 0;
};

}  // namespace cedana::engine
