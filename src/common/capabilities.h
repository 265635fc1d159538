// Linux capabilities of files and of this process: what unprivileged mode needs. The seeds give
// criu, cedana and cedana-slurm CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH and CAP_CHECKPOINT_RESTORE
// as file capabilities (setcap ...+eip); `cedana slurm setup` applies them, the engine checks
// criu has them before running it as a job's user, and cedana/cedana-slurm drop them at start
// (they never use them: the node daemon runs CRIU), so a user cannot read other users' files
// through them.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace cedana {

// Bit masks over capability numbers (1 << CAP_x).
inline constexpr uint64_t kCapDacReadSearch = uint64_t{1} << 2;
inline constexpr uint64_t kCapSysPtrace = uint64_t{1} << 19;
inline constexpr uint64_t kCapCheckpointRestore = uint64_t{1} << 40;
inline constexpr uint64_t kUnprivilegedModeCapabilities =
    kCapDacReadSearch | kCapSysPtrace | kCapCheckpointRestore;

// "CAP_DAC_READ_SEARCH,CAP_SYS_PTRACE,..." for a mask (numbers for unnamed bits).
std::string CapabilityNames(uint64_t mask);

// The permitted file capabilities of `path` (0 when it has none).
Result<uint64_t> FileCapabilities(const std::string& path);
// Gives `path` the capabilities `mask` as permitted, inheritable and effective (setcap
// <mask>+eip, as the seeds write it).
Status SetFileCapabilities(const std::string& path, uint64_t mask);
// Removes every file capability of `path` (setcap -r); OK when it has none.
Status RemoveFileCapabilities(const std::string& path);

// Drops every capability of this process (permitted, effective, inheritable, ambient) and makes
// it dumpable again, unless it runs as root. For binaries that carry file capabilities for the
// seeds' sake but do not use them.
void DropProcessCapabilities();

}  // namespace cedana
