#include "engine/streamer_protocol.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <string>

#include <gtest/gtest.h>

#include "common/unique_fd.h"

namespace cedana::engine {
namespace {

// img_streamer_request_entry's wire bytes: filename (field 1), maybe a varint field `field`
// (3: reads_extents_in_place; 2: its first version, which no longer counts).
std::string Request(const std::string& name, int value = -1, int field = 3) {
  std::string b = {0x0a, static_cast<char>(name.size())};
  b += name;
  if (value >= 0) b += {static_cast<char>(field << 3), static_cast<char>(value)};
  return b;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[64];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(StreamerProtocolTest, RequestsSayWhetherCriuReadsInPlace) {
  auto plain = ParseFileRequest(Request("pages-1.img"));
  ASSERT_TRUE(plain.has_value()) << plain.error().ToString();
  EXPECT_EQ(plain->name, "pages-1.img");
  EXPECT_FALSE(plain->reads_in_place);
  EXPECT_TRUE(ParseFileRequest(Request("pages-1.img", 1)).value().reads_in_place);
  EXPECT_FALSE(ParseFileRequest(Request("pages-1.img", 0)).value().reads_in_place);
  EXPECT_FALSE(ParseFileRequest(Request("pages-1.img", 1, 2)).value().reads_in_place)
      << "field 2 was a first version: its CRIU expects one file and an offset";
  EXPECT_FALSE(ParseFileRequest(Request("pages-1.img").substr(0, 5)).has_value());
  EXPECT_FALSE(ParseFileRequest(std::string{0x18, 0x01}).has_value()) << "no file name";
}

TEST(StreamerProtocolTest, RepliesCarryRunsOnlyForAnImageReadInPlace) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd ours(sv[0]), criu(sv[1]);
  ASSERT_TRUE(SendFileReply(ours.get(), false).ok());
  ASSERT_TRUE(SendFileReply(ours.get(), true).ok());
  // 241664 = 0x3b000: varint 0x80 0xe0 0x0e; 4096: 0x80 0x20.
  ASSERT_TRUE(SendInPlaceReply(ours.get(), {{1, 241664, 4096}, {0, 7, 1}}, 2).ok());
  ours.Reset();
  const std::string want = {
      2,    0, 0,    0, 0x08, 0,  //
      2,    0, 0,    0, 0x08, 1,  //
      23,   0, 0,    0, 0x08, 1,  // exists, then two runs (field 3, length-delimited) ...
      0x1a, 9, 0x08, 1, 0x10, '\x80', '\xe0', '\x0e', 0x18, '\x80', 0x20,  //
      0x1a, 6, 0x08, 0, 0x10, 7,      0x18,   1,                           //
      0x20, 2};                                                            // ... in 2 files
  EXPECT_EQ(ReadAll(criu.get()), want);
}

TEST(StreamerProtocolTest, TheFileToReadArrivesAsCriusRecvFdExpectsIt) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd ours(sv[0]), criu(sv[1]);
  FILE* tmp = std::tmpfile();
  ASSERT_NE(tmp, nullptr);
  ASSERT_TRUE(SendFileToRead(ours.get(), ::fileno(tmp)).ok());
  // One byte carrying one descriptor (CRIU's recv_fd()).
  char byte = 1;
  std::deque<UniqueFd> fds;
  ASSERT_TRUE(RecvExact(criu.get(), &byte, 1, &fds).ok());
  ASSERT_EQ(fds.size(), 1u);
  struct stat got = {}, sent = {};
  ASSERT_EQ(::fstat(fds.front().get(), &got), 0);
  ASSERT_EQ(::fstat(::fileno(tmp), &sent), 0);
  EXPECT_EQ(got.st_ino, sent.st_ino);
  EXPECT_EQ(got.st_dev, sent.st_dev);
  std::fclose(tmp);
}

}  // namespace
}  // namespace cedana::engine
