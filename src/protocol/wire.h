// The node daemon's wire protocol: newline-delimited JSON messages over a unix stream socket.
// A client sends one request {"v": 1, "op": "...", ...}; the daemon answers with zero or more
// {"type": "progress", ...} messages and one {"type": "result", "ok": bool, ...}. Errors carry
// "code" (a Code name) and "error" (the message). The version lets old CLIs talk to new
// daemons: a daemon refuses a request whose "v" it does not know, naming both versions.
// MessageReader is not thread-safe (one per connection).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cedana::protocol {

inline constexpr int kVersion = 1;

using Message = nlohmann::json;

// A request as it is sent: with the protocol version ("v") the daemon checks first.
inline Message WithVersion(Message request) {
  request["v"] = kVersion;
  return request;
}

// The message as one line of text, newline included. Invalid UTF-8 in a string (a path or a
// message built from one) is replaced with U+FFFD instead of throwing: the daemon writes its
// replies outside any try block, so this never throws (except std::bad_alloc).
std::string EncodeMessage(const Message& message);
Status WriteMessage(int fd, const Message& message);

class MessageReader {
 public:
  explicit MessageReader(int fd) : fd_(fd) {}
  // The next message; kUnavailable("connection closed") at end of stream. With a deadline, the
  // whole message must have arrived by then (one deadline for the message, not for each read:
  // a peer trickling a byte a second cannot hold the reader): kDeadlineExceeded otherwise.
  Result<Message> Read(std::optional<std::chrono::steady_clock::time_point> deadline = {});

 private:
  int fd_;
  std::string buffer_;
};

// {"type":"result","ok":true, ...fields}
Message OkResult(Message fields = Message::object());
// {"type":"result","ok":false,"code":"not found","error":"..."}
Message ErrorResult(const Status& status);
// The Status an error result carries (OkStatus for ok results).
Status StatusFromResult(const Message& result);

}  // namespace cedana::protocol
