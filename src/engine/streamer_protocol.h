// The wire of CRIU's image-streamer protocol (criu/img-streamer.c), shared by the dump side
// (ImageCapture) and the restore side (ImageServe): a unix socket in the images dir, requests
// framed as a u32 little-endian size and the protobuf img_streamer_request_entry{filename},
// pipes passed with SCM_RIGHTS on one byte.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "common/result.h"
#include "common/unique_fd.h"

namespace cedana::engine {

inline constexpr size_t kMaxRequest = 4096;  // a file name, protobuf-framed
// The longest path a unix socket can be bound at (sun_path, without its terminating NUL).
inline constexpr size_t kMaxSocketPathBytes = 107;

// Binds and listens on `path` (one connection). With `owner` the socket is given to that user,
// so that a CRIU running as them (unprivileged mode) can connect.
Result<UniqueFd> ListenForCriu(const std::string& path,
                               std::optional<std::pair<uid_t, gid_t>> owner);
// Reads exactly `size` bytes of the connection, collecting every fd that comes along.
// kUnavailable with "closed" when CRIU hung up before the first byte.
Status RecvExact(int sock, void* data, size_t size, std::deque<UniqueFd>* fds);
// img_streamer_request_entry { required string filename = 1; } from its wire bytes.
Result<std::string> ParseFileRequest(const std::string& bytes);
// The framed img_streamer_reply_entry { required bool exists = 1; } of a restore.
Status SendFileReply(int sock, bool exists);

}  // namespace cedana::engine
