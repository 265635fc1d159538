#include "protocol/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/bounded_json.h"

namespace cedana::protocol {
namespace {
constexpr size_t kMaxMessageBytes = 16 << 20;
}

std::string EncodeMessage(const Message& message) {
  return message.dump(-1, ' ', false, Message::error_handler_t::replace) + "\n";
}

Status WriteMessage(int fd, const Message& message) {
  std::string line = EncodeMessage(message);
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::send(fd, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "writing message");
    }
    off += static_cast<size_t>(n);
  }
  return OkStatus();
}

Result<Message> MessageReader::Read(std::optional<std::chrono::steady_clock::time_point> deadline) {
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      // Bounded: a local user's request nested 300000 levels deep must not overflow the
      // daemon's stack when a field of it is copied or printed.
      Result<Message> m = ParseBoundedJson(line);
      if (!m.has_value()) return std::move(m).error().WithContext("malformed message");
      if (!m->is_object()) return InvalidArgumentError("malformed message (not a JSON object)");
      return m;
    }
    if (buffer_.size() > kMaxMessageBytes) return InvalidArgumentError("message too large");
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return DeadlineExceededError("the message did not arrive in time");
    }
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "reading message");
    }
    if (n == 0) return UnavailableError("connection closed");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

Message OkResult(Message fields) {
  fields["type"] = "result";
  fields["ok"] = true;
  return fields;
}

Message ErrorResult(const Status& status) {
  return {{"type", "result"},
          {"ok", false},
          {"code", std::string(CodeName(status.code()))},
          {"error", status.message()}};
}

Status StatusFromResult(const Message& result) {
  if (result.value("ok", false)) return OkStatus();
  std::string code_name = result.value("code", "internal");
  std::string error = result.value("error", "unknown error");
  for (int c = 0; c <= static_cast<int>(Code::kInternal); ++c) {
    if (CodeName(static_cast<Code>(c)) == code_name) return Status(static_cast<Code>(c), error);
  }
  return InternalError(error);
}

}  // namespace cedana::protocol
