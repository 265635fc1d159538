// Bounded JSON parsing for text from outside the process: config files, manifests read from
// storage, requests on the node daemon's socket. nlohmann::json parses and destroys deep
// nesting without recursion, but copies, compares and prints it recursively, so a value nested
// a few hundred thousand levels deep ("[[[[...") overflows the stack of whoever copies or
// prints it (found by tests/fuzz). Text parsed here is refused past kMaxJsonDepth levels,
// far more than any of our formats uses. Stateless and thread-safe.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cedana {

// Objects and arrays nested deeper than this are refused. Our deepest format (a manifest's
// workload record) uses fewer than ten.
inline constexpr int kMaxJsonDepth = 64;

// The JSON value in `text`. kInvalidArgument "not valid JSON" or "JSON nested deeper than N
// levels". Never throws (except std::bad_alloc).
Result<nlohmann::json> ParseBoundedJson(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace cedana
