// Checkpoint ids: "<UTC yyyymmdd-hhmmss>-<random hex>", so that ids sort by creation time and a
// reader of the store alone can tell how old a checkpoint is (the abandoned-checkpoint sweep).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace cedana::storage {

// "20261201-155755-": the id's leading part for a checkpoint begun at `when`.
std::string CheckpointIdStamp(std::chrono::system_clock::time_point when);
// When the checkpoint named `id` was begun; nullopt when `id` does not start with a stamp.
std::optional<std::chrono::system_clock::time_point> CheckpointIdTime(std::string_view id);

}  // namespace cedana::storage
