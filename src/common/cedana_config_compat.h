// Cedana's config, read as ours (docs/configuration.md, "Coming from Cedana"): a site moving
// from Cedana keeps its /etc/cedana/config.json and its CEDANA_* variables. Cedana's keys that
// mean one of ours are read as aliases of ours, and its value spellings that differ from ours
// are mapped; what has no meaning here is left to the config loader, which warns and ignores
// it (common/config.h). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cedana {

struct CedanaKeyAlias {
  std::string_view theirs;  // "criu.binary_path"
  std::string_view ours;    // "criu.binary"
  std::string_view env;     // Cedana's variable for it, when it differs from ours; "" if not
};
// Every alias, for the docs' table and for tests.
const std::vector<CedanaKeyAlias>& CedanaKeyAliases();

// Our key for Cedana's `key`; nullopt when `key` is none of Cedana's aliases.
std::optional<std::string_view> OurKeyForCedanaKey(std::string_view key);

// A value of our key `key` in Cedana's spelling, and ours with why: checkpoint.compression
// "tar" -> "none" and "gz" -> "gzip", checkpoint.streams "0" (Cedana: one plain stream) -> "1",
// daemon.log_level "trace" -> "debug" and "fatal"/"panic" -> "error". nullopt when `value` is
// no Cedana spelling of that key.
struct MappedValue {
  std::string value;
  std::string note;  // "Cedana's \"tar\""
};
std::optional<MappedValue> OurValueForCedanaSpelling(std::string_view key, std::string_view value);

}  // namespace cedana
