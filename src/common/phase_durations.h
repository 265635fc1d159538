// PhaseDurations: how long each step of a dump or a restore took, in the order the steps ran
// (name -> milliseconds). One JSON form everywhere they travel or are kept: the daemon's dump
// and restore replies, the agent's operation reports, the controller's API and its catalog:
// [{"phase": "freeze", "ms": 412}, ...].
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cedana {

using PhaseDurations = std::vector<std::pair<std::string, int64_t>>;

nlohmann::json PhaseDurationsJson(const PhaseDurations& phases);
// kInvalidArgument unless `j` is an array of objects, each with a string "phase" and an integer
// "ms" of 0 or more.
Result<PhaseDurations> ParsePhaseDurations(const nlohmann::json& j);

}  // namespace cedana
