#include "common/phase_durations.h"

namespace cedana {

nlohmann::json PhaseDurationsJson(const PhaseDurations& phases) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [phase, ms] : phases) out.push_back({{"phase", phase}, {"ms", ms}});
  return out;
}

Result<PhaseDurations> ParsePhaseDurations(const nlohmann::json& j) {
  if (!j.is_array()) return InvalidArgumentError("\"phases\" must be an array");
  PhaseDurations out;
  for (const auto& p : j) {
    if (!p.is_object() || !p.contains("phase") || !p["phase"].is_string() || !p.contains("ms") ||
        !p["ms"].is_number_integer() || p["ms"].get<int64_t>() < 0)
      return InvalidArgumentError(
          "each of \"phases\" must be {\"phase\": a name, \"ms\": 0 or more}");
    out.emplace_back(p["phase"].get<std::string>(), p["ms"].get<int64_t>());
  }
  return out;
}

}  // namespace cedana
