// The wire of CRIU's image-streamer protocol (criu/img-streamer.c), shared by the dump side
// (ImageCapture) and the restore side (ImageServe): a unix socket in the images dir, requests
// framed as a u32 little-endian size and the protobuf img_streamer_request_entry{filename},
// pipes passed with SCM_RIGHTS on one byte (and, for a restore by our CRIU build, a regular
// file passed the other way to read in place).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
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
// img_streamer_request_entry { required string filename = 1; optional bool reads_in_place = 2; }
// from its wire bytes. reads_in_place comes from our CRIU build (its patch 0008) in a restore.
struct FileRequest {
  std::string name;
  bool reads_in_place = false;  // CRIU can take a regular file and an offset instead of a pipe
};
Result<FileRequest> ParseFileRequest(const std::string& bytes);
// The framed img_streamer_reply_entry { required bool exists = 1; optional uint64
// in_place_offset = 2; } of a restore. With `in_place_offset`, CRIU then waits for the file
// (SendFileToRead) instead of sending a pipe: only for a request that had reads_in_place.
Status SendFileReply(int sock, bool exists, std::optional<uint64_t> in_place_offset = {});
// One byte carrying `fd` (SCM_RIGHTS), as CRIU's recv_fd() expects it.
Status SendFileToRead(int sock, int fd);

}  // namespace cedana::engine
