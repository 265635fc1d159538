// The wire of CRIU's image-streamer protocol (criu/img-streamer.c), shared by the dump side
// (ImageCapture) and the restore side (ImageServe): a unix socket in the images dir, requests
// framed as a u32 little-endian size and the protobuf img_streamer_request_entry{filename},
// pipes passed with SCM_RIGHTS on one byte (and, for a restore by our CRIU build, regular files
// passed the other way to read an image in place).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
// img_streamer_request_entry { required string filename = 1; optional bool
// reads_extents_in_place = 3; } from its wire bytes. reads_extents_in_place comes from our CRIU
// build (its patch 0008) in a restore; field 2, a first version of it, is ignored.
struct FileRequest {
  std::string name;
  bool reads_in_place = false;  // CRIU can take regular files and runs instead of a pipe
};
Result<FileRequest> ParseFileRequest(const std::string& bytes);
// The framed img_streamer_reply_entry { required bool exists = 1; } of a restore.
Status SendFileReply(int sock, bool exists);
// `length` bytes of an image at `offset` of the reply's file number `file`: message
// img_streamer_extent { required uint32 file = 1; required uint64 offset = 2; required uint64
// length = 3; }.
struct ImageRun {
  uint32_t file = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};
// The reply for an image CRIU reads in place (only for a request that had
// reads_extents_in_place): exists, `runs` in the image's order (field 3) and how many files
// follow (field 4, `files`). CRIU then waits for each file (SendFileToRead) instead of sending
// a pipe.
Status SendInPlaceReply(int sock, const std::vector<ImageRun>& runs, uint32_t files);
// One byte carrying `fd` (SCM_RIGHTS), as CRIU's recv_fd() expects it.
Status SendFileToRead(int sock, int fd);

}  // namespace cedana::engine
