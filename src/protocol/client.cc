#include "protocol/client.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "common/unique_fd.h"

namespace cedana::protocol {

Result<Message> CallDaemon(const std::string& socket_path, Message request,
                           const ProgressHandler& on_progress) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus(errno, "creating socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path)
    return InvalidArgumentError("socket path too long: " + socket_path);
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    return Status(err == EACCES ? Code::kPermissionDenied : Code::kUnavailable,
                  "cannot reach the cedana daemon at " + socket_path + ": " + std::strerror(err) +
                      " (start it with `cedana daemon start`)",
                  err);
  }
  request = WithVersion(std::move(request));
  // A daemon that does not serve this connection (too many of this user's open) writes why
  // and closes at once, so the write may fail: its answer is then still there to read.
  Status sent = WriteMessage(fd.get(), request);
  MessageReader reader(fd.get());
  if (!sent.ok()) {
    Result<Message> refusal = reader.Read();
    if (refusal.has_value()) CEDANA_RETURN_IF_ERROR(StatusFromResult(*refusal));
    return sent;
  }
  for (;;) {
    Result<Message> m = reader.Read();
    if (!m.has_value())
      return UnavailableError("the cedana daemon closed the connection before answering (" +
                              m.error().message() + "); see its log");
    if (m->value("type", "") == "progress") {
      if (on_progress) on_progress(*m);
      continue;
    }
    CEDANA_RETURN_IF_ERROR(StatusFromResult(*m));
    return std::move(m).value();
  }
}

}  // namespace cedana::protocol
