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
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "engine/streamer_protocol.h"

namespace cedana::engine {
namespace {

// pages-1.img lies in two files: "pag" from offset 5 of the first, "es" from offset 2 of the
// second. Every other image but missing.img is sent.
class FakeSource : public ImageSource {
 public:
  FakeSource(std::string first, std::string second)
      : first_(std::move(first)), second_(std::move(second)) {}
  Result<bool> Has(const std::string& name) override { return name != "missing.img"; }
  Status Send(const std::string& name, int pipe_fd) override {
    std::string bytes = "sent " + name;
    return ::write(pipe_fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())
               ? OkStatus()
               : ErrnoStatus(errno, "write");
  }
  Result<std::optional<InPlaceImage>> InPlace(const std::string& name) override {
    if (name != "pages-1.img") return std::optional<InPlaceImage>();
    InPlaceImage image;
    for (const std::string& path : {first_, second_}) {
      image.files.emplace_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!image.files.back().valid()) return ErrnoStatus(errno, "open " + path);
    }
    image.runs = {{0, 5, 3}, {1, 2, 2}};
    return std::make_optional(std::move(image));
  }

 private:
  std::string first_, second_;
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

  // Which request field says that CRIU reads in place: our patch's, its first version's (a
  // CRIU that expects one file and an offset), or none (an unpatched CRIU).
  enum class Asks { kExtents = 3, kFirstVersion = 2, kNothing = 0 };

  // What reading `name` gives: "missing", the bytes through a pipe, or "in place (R runs in F
  // files): bytes".
  std::string Read(const std::string& name, Asks asks) {
    std::string req = {0x0a, static_cast<char>(name.size())};
    req += name;
    if (asks != Asks::kNothing) req += {static_cast<char>(static_cast<int>(asks) << 3), 0x01};
    uint32_t size = static_cast<uint32_t>(req.size());
    std::string framed(reinterpret_cast<char*>(&size), 4);
    framed += req;
    if (::write(sock_.get(), framed.data(), framed.size()) != static_cast<ssize_t>(framed.size()))
      return "request failed";
    uint32_t reply_size = 0;
    if (!ReadExact(&reply_size, 4) || reply_size > 256) return "no reply";
    std::string reply(reply_size, '\0');
    if (!ReadExact(reply.data(), reply_size)) return "short reply";
    if (reply.substr(0, 2) != std::string{0x08, 0x01}) return "missing";
    if (reply.size() > 2) return ReadInPlace(reply.substr(2));
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
  // The reply's fields after `exists`: runs (3: file 1, offset 2, length 3) and the number of
  // files (4), which then arrive; the image read run after run.
  std::string ReadInPlace(const std::string& fields) {
    struct Run {
      uint64_t field[4] = {};
    };
    std::vector<Run> runs;
    uint64_t files = 0;
    size_t i = 0;
    auto varint = [](const std::string& b, size_t* at) {
      uint64_t v = 0;
      for (int shift = 0; *at < b.size(); shift += 7) {
        uint8_t x = static_cast<uint8_t>(b[(*at)++]);
        v |= static_cast<uint64_t>(x & 0x7f) << shift;
        if (x < 0x80) break;
      }
      return v;
    };
    while (i < fields.size()) {
      uint64_t key = varint(fields, &i);
      if (key == 0x20) {
        files = varint(fields, &i);
        continue;
      }
      if (key != 0x1a) return "unexpected field " + std::to_string(key);
      std::string run = fields.substr(i, varint(fields, &i));
      i += run.size();
      Run r;
      for (size_t j = 0; j < run.size();) {
        uint64_t k = varint(run, &j);
        r.field[(k >> 3) & 3] = varint(run, &j);
      }
      runs.push_back(r);
    }
    std::vector<UniqueFd> received;
    for (uint64_t f = 0; f < files; ++f) {
      char byte;
      std::deque<UniqueFd> fds;
      if (!RecvExact(sock_.get(), &byte, 1, &fds).ok() || fds.size() != 1) return "no file";
      received.push_back(std::move(fds.front()));
    }
    std::string image;
    for (const Run& r : runs) {
      if (r.field[1] >= received.size()) return "a run in no file";
      std::string bytes(r.field[3], '\0');
      ssize_t n = ::pread(received[r.field[1]].get(), bytes.data(), bytes.size(),
                          static_cast<off_t>(r.field[2]));
      image += bytes.substr(0, n > 0 ? n : 0);
    }
    return "in place (" + std::to_string(runs.size()) + " runs in " + std::to_string(files) +
           " files): " + image;
  }
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
    for (auto [name, bytes] : {std::pair{"stream-0", "head:pag"}, std::pair{"stream-1", "xxes"}}) {
      UniqueFd f(::open((dir_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
      ASSERT_EQ(::write(f.get(), bytes, std::strlen(bytes)), std::strlen(bytes));
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ImageServeTest, CriuThatReadsInPlaceGetsTheFilesAndRunsElseAPipe) {
  FakeSource source(dir_ + "/stream-0", dir_ + "/stream-1");
  auto serve = ImageServe::Listen(dir_, std::nullopt, &source);
  ASSERT_TRUE(serve.has_value()) << serve.error().ToString();
  FakeCriu criu(dir_ + "/" + kStreamerServeSocket);
  ASSERT_TRUE(criu.connected());
  using Asks = FakeCriu::Asks;
  const std::string in_place = "in place (2 runs in 2 files): pages";
  EXPECT_EQ(criu.Read("pages-1.img", Asks::kExtents), in_place);
  EXPECT_EQ(criu.Read("pages-1.img", Asks::kExtents), in_place);            // the restorer's open
  EXPECT_EQ(criu.Read("core-1.img", Asks::kExtents), "sent core-1.img");    // nowhere in place
  EXPECT_EQ(criu.Read("pages-1.img", Asks::kNothing), "sent pages-1.img");  // unpatched CRIU
  EXPECT_EQ(criu.Read("pages-1.img", Asks::kFirstVersion), "sent pages-1.img");
  EXPECT_EQ(criu.Read("missing.img", Asks::kExtents), "missing");
  (*serve)->Stop();
  EXPECT_EQ((*serve)->ImagesInPlace(), 1u);
}

}  // namespace
}  // namespace cedana::engine
