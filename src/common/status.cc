#include "common/status.h"

#include <cstring>

namespace cedana {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kNotFound: return "not found";
    case Code::kAlreadyExists: return "already exists";
    case Code::kFailedPrecondition: return "failed precondition";
    case Code::kUnavailable: return "unavailable";
    case Code::kAborted: return "aborted";
    case Code::kDeadlineExceeded: return "deadline exceeded";
    case Code::kPermissionDenied: return "permission denied";
    case Code::kUnsupported: return "unsupported";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

Status Status::WithContext(std::string_view context) const& {
  Status copy = *this;
  return std::move(copy).WithContext(context);
}

Status&& Status::WithContext(std::string_view context) && {
  if (!ok()) message_ = std::string(context) + ": " + message_;
  return std::move(*this);
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status InvalidArgumentError(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
Status NotFoundError(std::string m) { return {Code::kNotFound, std::move(m)}; }
Status AlreadyExistsError(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
Status FailedPreconditionError(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }
Status UnavailableError(std::string m) { return {Code::kUnavailable, std::move(m)}; }
Status AbortedError(std::string m) { return {Code::kAborted, std::move(m)}; }
Status DeadlineExceededError(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
Status PermissionDeniedError(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
Status UnsupportedError(std::string m) { return {Code::kUnsupported, std::move(m)}; }
Status InternalError(std::string m) { return {Code::kInternal, std::move(m)}; }

Status ErrnoStatus(int err, std::string message) {
  Code code = Code::kInternal;
  switch (err) {
    case ENOENT:
    case ESRCH: code = Code::kNotFound; break;
    case EACCES:
    case EPERM:
    case EROFS: code = Code::kPermissionDenied; break;
    case EEXIST: code = Code::kAlreadyExists; break;
    case EAGAIN:
    case EINTR:
    case ECONNREFUSED:
    case EPIPE:
    case ECONNRESET: code = Code::kUnavailable; break;
    case EINVAL:
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR: code = Code::kInvalidArgument; break;
    case ENOSPC:
    case EDQUOT:
    case EBUSY:
    case ENOTEMPTY: code = Code::kFailedPrecondition; break;
    case ETIMEDOUT: code = Code::kDeadlineExceeded; break;
    default: break;
  }
  return Status(code, message + ": " + std::strerror(err), err);
}

}  // namespace cedana
