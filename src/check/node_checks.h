// The checks of `cedana check` and `cedana daemon check`: each thing a checkpoint or a restore
// on this node depends on, probed for real (CRIU run, a breakpoint set in a child, a probe
// written to the checkpoint store and removed), and reported with what to do about it.
#pragma once

#include <cstdint>
#include <string>

#include "check/check_report.h"
#include "common/config.h"

namespace cedana::check {

struct CheckOptions {
  // Also SLURM, the controller and the store's write throughput (`cedana check`, `cedana
  // daemon check --full`); without it only what the node daemon itself needs.
  bool full = true;
  // Bytes written to the store to measure its throughput.
  uint64_t probe_bytes = uint64_t{64} << 20;
  // The plugin store (one build per SLURM version), for the builds there are when the plugins
  // are not installed into SLURM yet.
  std::string plugin_store;
};

// Runs every check in order; never fails as a whole (a probe that cannot run is a finding).
CheckReport CheckNode(const Config& config, const CheckOptions& options);

}  // namespace cedana::check
