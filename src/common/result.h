// Result<T>: a T or the Status saying why there is none. Spelled like std::expected
// (has_value(), value(), error()) so that moving to C++23 is a rename. Value type.
#pragma once

#include <cassert>
#include <optional>
#include <utility>

#include "common/status.h"

namespace cedana {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = InternalError("Result constructed from an ok Status");
  }
  Result(internal::StatusContextBuilder&& b) : Result(static_cast<Status>(b)) {}  // NOLINT
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, Status> &&
           !std::is_same_v<std::decay_t<U>, Result>) Result(U&& v)
      : value_(T(std::forward<U>(v))) {}  // NOLINT

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  T& value() & {
    assert(has_value());
    return *value_;
  }
  const T& value() const& {
    assert(has_value());
    return *value_;
  }
  T&& value() && {
    assert(has_value());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // The error; OkStatus() when there is a value.
  const Status& error() const& { return status_; }
  Status&& error() && { return std::move(status_); }

 private:
  std::optional<T> value_;
  Status status_;
};

namespace internal {
template <typename T>
const Status& AsStatus(const Result<T>& r) {
  return r.error();
}
template <typename T>
Status AsStatus(Result<T>&& r) {
  return std::move(r).error();
}
}  // namespace internal

}  // namespace cedana

// CEDANA_ASSIGN_OR_RETURN(auto x, expr): evaluates a Result; returns its error, else binds x.
#define CEDANA_ASSIGN_OR_RETURN(lhs, expr) \
  CEDANA_ASSIGN_OR_RETURN_IMPL_(CEDANA_CONCAT_(result_, __LINE__), lhs, expr)
#define CEDANA_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)  \
  auto tmp = (expr);                                   \
  if (!tmp.has_value()) return std::move(tmp).error(); \
  lhs = std::move(tmp).value()
