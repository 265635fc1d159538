#include "engine/image_serve.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "engine/streamer_protocol.h"

namespace cedana::engine {
namespace {

// pages-1.img lies in a file from offset 5; every other image but missing.img is sent.
class FakeSource : public ImageSource {
 public:
  explicit FakeSource(std::string file) : file_(std::move(file)) {}
  Result<bool> Has(const std::string& name) override { return name != "missing.img"; }
  Status Send(const std::string& name, int pipe_fd) override {
    std::string bytes = "sent " + name;
    return ::write(pipe_fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())
               ? OkStatus()
               : ErrnoStatus(errno, "write");
  }
  Result<std::optional<InPlaceFile>> InPlace(const std::string& name) override {
    if (name != "pages-1.img") return std::optional<InPlaceFile>();
    UniqueFd fd(::open(file_.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return ErrnoStatus(errno, "open " + file_);
    return std::make_optional(InPlaceFile{std::move(fd), 5});
  }

 private:
  std::string file_;
};

// CRIU's side of the protocol (criu/img-streamer.c, with our patch 0008): one byte carrying a
// descriptor each way, as SendFileToRead and RecvExact move them.
class FakeCriu {
 public:
  explicit FakeCriu(const std::string& socket) : sock_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
    connected_ = ::connect(sock_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    // A server that answers otherwise than expected fails the test instead of hanging it.
    timeval timeout{5, 0};
    ::setsockopt(sock_.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  bool connected() const { return connected_; }

  // What reading `name` gives: "missing", the bytes through a pipe, or "in place at N: bytes".
  std::string Read(const std::string& name, bool reads_in_place) {
    std::string req = {0x0a, static_cast<char>(name.size())};
    req += name;
    if (reads_in_place) req += {0x10, 0x01};
    uint32_t size = static_cast<uint32_t>(req.size());
    std::string framed(reinterpret_cast<char*>(&size), 4);
    framed += req;
    if (::write(sock_.get(), framed.data(), framed.size()) != static_cast<ssize_t>(framed.size()))
      return "request failed";
    uint32_t reply_size = 0;
    if (!ReadExact(&reply_size, 4) || reply_size > 32) return "no reply";
    std::string reply(reply_size, '\0');
    if (!ReadExact(reply.data(), reply_size)) return "short reply";
    if (reply.substr(0, 2) != std::string{0x08, 0x01}) return "missing";
    if (reply.size() > 2) {  // field 2, a varint: the offset
      uint64_t offset = 0;
      for (size_t i = 3, shift = 0; i < reply.size(); ++i, shift += 7)
        offset |= static_cast<uint64_t>(reply[i] & 0x7f) << shift;
      char byte;
      std::deque<UniqueFd> fds;
      if (!RecvExact(sock_.get(), &byte, 1, &fds).ok() || fds.size() != 1) return "no file";
      UniqueFd file = std::move(fds.front());
      char buf[64] = {};
      ssize_t n = ::pread(file.get(), buf, sizeof buf, static_cast<off_t>(offset));
      return "in place at " + std::to_string(offset) + ": " + std::string(buf, n > 0 ? n : 0);
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return "pipe failed";
    UniqueFd read_end(p[0]), write_end(p[1]);
    if (!SendFileToRead(sock_.get(), write_end.get()).ok()) return "pipe not sent";
    write_end.Reset();
    std::string out;
    char buf[64];
    for (pollfd p{read_end.get(), POLLIN, 0}; ::poll(&p, 1, 5000) == 1;) {
      ssize_t n = ::read(read_end.get(), buf, sizeof buf);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
    return out + " (timed out)";
  }

 private:
  bool ReadExact(void* data, size_t size) {
    return ::recv(sock_.get(), data, size, MSG_WAITALL) == static_cast<ssize_t>(size);
  }
  UniqueFd sock_;
  bool connected_ = false;
};

class ImageServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/image-serve-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    UniqueFd f(::open((dir_ + "/stream").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_EQ(::write(f.get(), "head:pages", 10), 10);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ImageServeTest, CriuThatReadsInPlaceGetsTheFileElseAPipe) {
  FakeSource source(dir_ + "/stream");
  auto serve = ImageServe::Listen(dir_, std::nullopt, &source);
  ASSERT_TRUE(serve.has_value()) << serve.error().ToString();
  FakeCriu criu(dir_ + "/" + kStreamerServeSocket);
  ASSERT_TRUE(criu.connected());
  EXPECT_EQ(criu.Read("pages-1.img", true), "in place at 5: pages");
  EXPECT_EQ(criu.Read("pages-1.img", true), "in place at 5: pages");  // the restorer's open
  EXPECT_EQ(criu.Read("core-1.img", true), "sent core-1.img");        // nowhere to read in place
  EXPECT_EQ(criu.Read("pages-1.img", false), "sent pages-1.img");     // a CRIU without our patch
  EXPECT_EQ(criu.Read("missing.img", true), "missing");
  (*serve)->Stop();
  EXPECT_EQ((*serve)->ImagesInPlace(), 1u);
}

}  // namespace
}  // namespace cedana::engine
