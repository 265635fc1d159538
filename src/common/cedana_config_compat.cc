#include "common/cedana_config_compat.h"

#include <fmt/format.h>

namespace cedana {

const std::vector<CedanaKeyAlias>& CedanaKeyAliases() {
  // Cedana's keys whose names differ from ours; the ones spelled alike (checkpoint.dir,
  // checkpoint.compression, checkpoint.streams, connection.url, connection.auth_token,
  // slurm.unprivileged) need no alias.
  static const std::vector<CedanaKeyAlias> aliases = {
      {"log_level", "daemon.log_level", ""},
      {"criu.binary_path", "criu.binary", "CEDANA_CRIU_BINARY_PATH"},
      {"checkpoint.stream_memory_limit", "checkpoint.memory_limit_mib",
       "CEDANA_CHECKPOINT_STREAM_MEMORY_LIMIT"},
      {"aws.access_key_id", "s3.access_key_id", ""},
      {"aws.secret_access_key", "s3.secret_access_key", ""},
      {"aws.region", "s3.region", ""},
      {"aws.endpoint", "s3.endpoint_url", "AWS_ENDPOINT"},
  };
  return aliases;
}

std::optional<std::string_view> OurKeyForCedanaKey(std::string_view key) {
  for (const CedanaKeyAlias& a : CedanaKeyAliases())
    if (a.theirs == key) return a.ours;
  return std::nullopt;
}

std::optional<MappedValue> OurValueForCedanaSpelling(std::string_view key, std::string_view value) {
  struct Spelling {
    std::string_view key, theirs, ours;
  };
  static constexpr Spelling kSpellings[] = {
      {"checkpoint.compression", "tar", "none"}, {"checkpoint.compression", "gz", "gzip"},
      {"checkpoint.streams", "0", "1"},  // Cedana: 0 = no parallel streams, one plain stream
      {"daemon.log_level", "trace", "debug"},    {"daemon.log_level", "fatal", "error"},
      {"daemon.log_level", "panic", "error"},
  };
  for (const Spelling& s : kSpellings)
    if (s.key == key && s.theirs == value)
      return MappedValue{std::string(s.ours), fmt::format("Cedana's \"{}\"", s.theirs)};
  return std::nullopt;
}

}  // namespace cedana
