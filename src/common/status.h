// Status: the outcome of an operation that can fail, as a value (docs/architecture.md, "Code
// conventions"). A Status is a code from a small closed set, a message that grows context as it
// propagates up ("dumping workload w-1: criu: ..."), and an optional errno. Thread-compatible value
// type.
#pragma once

#include <cerrno>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace cedana {

// Pick the code by what the caller should do next.
enum class Code {
  kOk = 0,
  kInvalidArgument,     // fix the request
  kNotFound,            // the thing named does not exist
  kAlreadyExists,       // it exists already
  kFailedPrecondition,  // fix the state first
  kUnavailable,         // retry this call
  kAborted,             // retry the whole operation
  kDeadlineExceeded,    // it took too long and was stopped
  kPermissionDenied,    // not allowed for this caller
  kUnsupported,         // cannot be done for what it is asked on (a checkpoint refused)
  kInternal,            // our bug (last: the wire decodes codes up to it)
};

std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message, int err = 0)
      : code_(code), message_(std::move(message)), errno_(err) {}

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  int error_number() const { return errno_; }

  // Prepends context: Status(kNotFound, "x").WithContext("loading y") -> "loading y: x".
  Status WithContext(std::string_view context) const&;
  Status&& WithContext(std::string_view context) &&;

  // "not found: loading y: x" (code name first, for logs and CLI output).
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  int errno_ = 0;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnavailableError(std::string message);
Status AbortedError(std::string message);
Status DeadlineExceededError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnsupportedError(std::string message);
Status InternalError(std::string message);
// A failed syscall: "<message>: <strerror(err)>", code chosen from errno (ENOENT -> kNotFound,
// EACCES/EPERM -> kPermissionDenied, EEXIST -> kAlreadyExists, EAGAIN/EINTR -> kUnavailable...).
Status ErrnoStatus(int err, std::string message);

namespace internal {
// Lets CEDANA_RETURN_IF_ERROR(expr) << "context" build the context with operator<<.
class StatusContextBuilder {
 public:
  explicit StatusContextBuilder(Status status) : status_(std::move(status)) {}
  template <typename T>
  StatusContextBuilder&& operator<<(const T& v) {
    context_ << v;
    return std::move(*this);
  }
  operator Status() {
    std::string ctx = context_.str();
    return ctx.empty() ? status_ : status_.WithContext(ctx);
  }

 private:
  Status status_;
  std::ostringstream context_;
};
}  // namespace internal

}  // namespace cedana

#define CEDANA_CONCAT_INNER_(a, b) a##b
#define CEDANA_CONCAT_(a, b) CEDANA_CONCAT_INNER_(a, b)

// Returns the Status of `expr` (a Status or a Result) from the enclosing function when it is
// not ok; `<< "context"` may follow to prepend context. A loop that runs at most once rather
// than an if/else: the macro has no else of its own, so `if (c) CEDANA_RETURN_IF_ERROR(x);
// else ...` binds the else to the caller's if.
#define CEDANA_RETURN_IF_ERROR(expr)                                                            \
  for (::cedana::Status CEDANA_CONCAT_(status_, __LINE__) = ::cedana::internal::AsStatus(expr); \
       !CEDANA_CONCAT_(status_, __LINE__).ok();)                                                \
  return ::cedana::internal::StatusContextBuilder(std::move(CEDANA_CONCAT_(status_, __LINE__)))

namespace cedana::internal {
inline const Status& AsStatus(const Status& s) { return s; }
inline Status AsStatus(Status&& s) { return std::move(s); }
}  // namespace cedana::internal
