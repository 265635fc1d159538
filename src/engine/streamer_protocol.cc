#include "engine/streamer_protocol.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace cedana::engine {

Result<UniqueFd> ListenForCriu(const std::string& path,
                               std::optional<std::pair<uid_t, gid_t>> owner) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  static_assert(kMaxSocketPathBytes + 1 == sizeof addr.sun_path);
  if (path.size() > kMaxSocketPathBytes)
    return InvalidArgumentError(fmt::format(
        "{} is {} bytes, too long for a unix socket (at most {}): set checkpoint.work_dir to a "
        "shorter path",
        path, path.size(), kMaxSocketPathBytes));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus(errno, "creating the image streamer socket");
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return ErrnoStatus(errno, "binding " + path);
  // The images dir is the owner's and 0700; the socket itself needs write permission to connect.
  if (owner && ::chown(path.c_str(), owner->first, owner->second) != 0)
    return ErrnoStatus(errno, "giving " + path + " to uid " + std::to_string(owner->first));
  if (::listen(fd.get(), 1) != 0) return ErrnoStatus(errno, "listening on " + path);
  return fd;
}

Status RecvExact(int sock, void* data, size_t size, std::deque<UniqueFd>* fds) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    iovec iov{p + got, size - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "reading criu's image streamer request");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds->emplace_back(fd);
      }
    }
    if (n == 0) {
      return got == 0 ? UnavailableError("closed")
                      : AbortedError("criu's image streamer request is truncated");
    }
    got += static_cast<size_t>(n);
  }
  return OkStatus();
}

Result<FileRequest> ParseFileRequest(const std::string& b) {
  std::optional<std::string> name;
  bool reads_in_place = false;
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; i < b.size() && shift < 64; shift += 7) {
      uint8_t x = static_cast<uint8_t>(b[i++]);
      *v |= static_cast<uint64_t>(x & 0x7f) << shift;
      if (x < 0x80) return true;
    }
    return false;
  };
  while (i < b.size()) {
    uint64_t key = 0, v = 0;
    if (!varint(&key)) break;
    int wire = static_cast<int>(key & 7);
    if (wire == 0 && varint(&v)) {
      if ((key >> 3) == 3) reads_in_place = v != 0;
      continue;
    }
    if (wire != 2 || !varint(&v) || v > b.size() - i) break;
    if ((key >> 3) == 1) name = b.substr(i, v);
    i += v;
  }
  if (i != b.size() || !name) return AbortedError("criu sent a malformed image streamer request");
  return FileRequest{*name, reads_in_place};
}

namespace {

void PutVarint(std::string* out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out->push_back(static_cast<char>((v & 0x7f) | 0x80));
  out->push_back(static_cast<char>(v));
}

// A protobuf field: its key (number, wire type), then its varint value.
void PutVarintField(std::string* out, int number, uint64_t v) {
  PutVarint(out, static_cast<uint64_t>(number) << 3);
  PutVarint(out, v);
}

// `message`, framed by its u32 little-endian size, on the connection.
Status SendFramed(int sock, const std::string& message) {
  const uint32_t size = static_cast<uint32_t>(message.size());
  std::string reply(4, '\0');
  for (int i = 0; i < 4; ++i) reply[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  reply += message;
  for (size_t off = 0; off < reply.size();) {
    ssize_t n = ::send(sock, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "answering criu's image request");
    off += static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

Status SendFileReply(int sock, bool exists) {
  std::string message;
  PutVarintField(&message, 1, exists ? 1 : 0);
  return SendFramed(sock, message);
}

Status SendInPlaceReply(int sock, const std::vector<ImageRun>& runs, uint32_t files) {
  std::string message;
  PutVarintField(&message, 1, 1);
  for (const ImageRun& run : runs) {
    std::string extent;
    PutVarintField(&extent, 1, run.file);
    PutVarintField(&extent, 2, run.offset);
    PutVarintField(&extent, 3, run.length);
    PutVarint(&message, (3 << 3) | 2);  // field 3, length-delimited
    PutVarint(&message, extent.size());
    message += extent;
  }
  PutVarintField(&message, 4, files);
  return SendFramed(sock, message);
}

Status SendFileToRead(int sock, int fd) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  for (;;) {
    ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "passing criu an image file to read in place");
    return OkStatus();
  }
}

}  // namespace cedana::engine
