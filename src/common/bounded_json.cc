#include "common/bounded_json.h"

#include <fmt/format.h>

namespace cedana {

Result<nlohmann::json> ParseBoundedJson(std::string_view text, int max_depth) {
  using nlohmann::json;
  bool too_deep = false;
  // Called as each object or array starts, with the number of containers around it; once one
  // is too deep every further value is dropped, so nothing deep is ever built.
  json::parser_callback_t limit_depth = [&](int depth, json::parse_event_t event, json&) {
    if (too_deep) return false;
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= max_depth)
      too_deep = true;
    return !too_deep;
  };
  json value = json::parse(text, limit_depth, /*allow_exceptions=*/false);
  if (too_deep)
    return InvalidArgumentError(fmt::format("JSON nested deeper than {} levels", max_depth));
  if (value.is_discarded()) return InvalidArgumentError("not valid JSON");
  return value;
}

}  // namespace cedana
