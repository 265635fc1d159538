// Reading path and query parameters of an API request, with errors that name the parameter.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

inline Result<int64_t> ParseInt(const std::string& text, const char* what) {
  try {
    size_t used = 0;
    int64_t v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return InvalidArgumentError(fmt::format("{} \"{}\" is not a number", what, text));
}

// The n-th capture of the route pattern as a number.
inline Result<int64_t> PathId(const httplib::Request& req, const char* what, int n = 1) {
  return ParseInt(req.matches[n].str(), what);
}

inline std::optional<std::string> Query(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  std::string v = req.get_param_value(name);
  if (v.empty()) return std::nullopt;
  return v;
}

// ?limit= (1..1000, absent: every row) and ?after= (the X-Next-After of the page before).
inline Result<PageRequest> PageOf(const httplib::Request& req) {
  constexpr int64_t kMaxLimit = 1000;
  PageRequest page;
  if (auto limit = Query(req, "limit")) {
    CEDANA_ASSIGN_OR_RETURN(int64_t n, ParseInt(*limit, "limit"));
    if (n < 1 || n > kMaxLimit)
      return InvalidArgumentError(fmt::format("limit {} is out of range (1 to {})", n, kMaxLimit));
    page.limit = static_cast<int>(n);
  }
  page.after = Query(req, "after").value_or("");
  return page;
}

}  // namespace cedana::controller
