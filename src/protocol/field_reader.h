// FieldReader: typed reads of a protocol message's optional fields, shared by the request
// (daemon_request.h) and reply (daemon_reply.h) parsers. Never throws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/status.h"
#include "protocol/wire.h"

namespace cedana::protocol {

// Typed reads of optional fields: absent leaves *out unchanged; present with another type or
// out of range is kInvalidArgument naming the field. nlohmann's value()/get() would throw.
class FieldReader {
 public:
  // `what` names the message in errors: "request" gives `request field "x" must be ...`.
  FieldReader(const Message& message, std::string_view what) : message_(message), what_(what) {}

  bool Has(const char* key) const { return message_.contains(key); }

  // Strings carry paths and names to syscalls, whose C strings would end at a NUL: a string
  // with one is refused rather than silently cut short.
  Status String(const char* key, std::string* out) const {
    auto it = message_.find(key);
    if (it == message_.end()) return OkStatus();
    if (!it->is_string()) return Bad(key, "a string");
    const std::string& text = it->get_ref<const std::string&>();
    if (text.find('\0') != std::string::npos) return Bad(key, "a string without NUL bytes");
    *out = text;
    return OkStatus();
  }

  Status StringList(const char* key, std::vector<std::string>* out) const {
    auto it = message_.find(key);
    if (it == message_.end()) return OkStatus();
    if (!it->is_array()) return Bad(key, "an array of strings");
    std::vector<std::string> list;
    for (const Message& item : *it) {
      if (!item.is_string()) return Bad(key, "an array of strings");
      const std::string& text = item.get_ref<const std::string&>();
      if (text.find('\0') != std::string::npos)
        return Bad(key, "an array of strings without NUL bytes");
      list.push_back(text);
    }
    *out = std::move(list);
    return OkStatus();
  }

  // Integers, each in [min, max].
  Status IntList(const char* key, int64_t min, int64_t max, std::vector<int>* out) const {
    auto it = message_.find(key);
    if (it == message_.end()) return OkStatus();
    std::string what = fmt::format("an array of integers from {} to {}", min, max);
    if (!it->is_array()) return Bad(key, what);
    std::vector<int> list;
    for (const Message& item : *it) {
      if (!item.is_number_integer()) return Bad(key, what);
      int64_t v = item.is_number_unsigned() && item.get<uint64_t>() > static_cast<uint64_t>(max)
                      ? max + 1
                      : item.get<int64_t>();
      if (v < min || v > max) return Bad(key, what);
      list.push_back(static_cast<int>(v));
    }
    *out = std::move(list);
    return OkStatus();
  }

  Status Bool(const char* key, bool* out) const {
    auto it = message_.find(key);
    if (it == message_.end()) return OkStatus();
    if (!it->is_boolean()) return Bad(key, "true or false");
    *out = it->get<bool>();
    return OkStatus();
  }

  // An integer in [min, max]. Doubles ("5.0") and numbers past int64 are refused, never
  // truncated: a pid of 2^32+5 must not become pid 5.
  Status Int(const char* key, int64_t min, int64_t max, int64_t* out) const {
    auto it = message_.find(key);
    if (it == message_.end()) return OkStatus();
    std::string range = fmt::format("an integer from {} to {}", min, max);
    if (it->is_number_unsigned()) {
      // nlohmann keeps every non-negative integer as unsigned: 0 arrives here, below a min of 1.
      uint64_t v = it->get<uint64_t>();
      if (v > static_cast<uint64_t>(max) || static_cast<int64_t>(v) < min) return Bad(key, range);
      *out = static_cast<int64_t>(v);
    } else if (it->is_number_integer()) {
      int64_t v = it->get<int64_t>();
      if (v < min || v > max) return Bad(key, range);
      *out = v;
    } else {
      return Bad(key, range);
    }
    return OkStatus();
  }

  Status Bad(const char* key, std::string_view want) const {
    return InvalidArgumentError(fmt::format("{} field \"{}\" must be {}", what_, key, want));
  }

 private:
  const Message& message_;
  const std::string_view what_;
};

}  // namespace cedana::protocol
