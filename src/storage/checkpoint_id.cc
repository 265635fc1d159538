#include "storage/checkpoint_id.h"

#include <ctime>

namespace cedana::storage {

std::string CheckpointIdStamp(std::chrono::system_clock::time_point when) {
  std::time_t secs = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S-", &tm);
  return stamp;
}

std::optional<std::chrono::system_clock::time_point> CheckpointIdTime(std::string_view id) {
  constexpr std::string_view kShape = "dddddddd-dddddd-";
  if (id.size() < kShape.size()) return std::nullopt;
  for (size_t i = 0; i < kShape.size(); ++i) {
    const bool digit = id[i] >= '0' && id[i] <= '9';
    if (kShape[i] == 'd' ? !digit : id[i] != '-') return std::nullopt;
  }
  auto num = [&](size_t at, size_t len) {
    int v = 0;
    for (size_t i = at; i < at + len; ++i) v = v * 10 + (id[i] - '0');
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(4, 2) - 1;
  tm.tm_mday = num(6, 2);
  tm.tm_hour = num(9, 2);
  tm.tm_min = num(11, 2);
  tm.tm_sec = num(13, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60)
    return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace cedana::storage
