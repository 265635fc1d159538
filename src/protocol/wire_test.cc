#include "protocol/wire.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include "common/unique_fd.h"

namespace cedana::protocol {
namespace {

TEST(WireTest, MessagesRoundTripOverASocket) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  ASSERT_TRUE(WriteMessage(a.get(), {{"op", "ps"}, {"v", 1}}).ok());
  ASSERT_TRUE(WriteMessage(a.get(), ErrorResult(NotFoundError("workload x"))).ok());
  a.Reset();
  MessageReader reader(b.get());
  auto first = reader.Read();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ((*first)["op"], "ps");
  auto second = reader.Read();
  ASSERT_TRUE(second.has_value());
  Status s = StatusFromResult(*second);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "workload x");
  auto end = reader.Read();
  EXPECT_EQ(end.error().code(), Code::kUnavailable);
}

TEST(WireTest, EveryCodeCrossesTheWire) {
  for (int c = 1; c <= static_cast<int>(Code::kInternal); ++c) {
    Status sent(static_cast<Code>(c), "why");
    EXPECT_NE(CodeName(sent.code()), "unknown") << "code " << c << " has no name on the wire";
    Status got = StatusFromResult(ErrorResult(sent));
    EXPECT_EQ(got.code(), sent.code()) << CodeName(sent.code());
    EXPECT_EQ(got.message(), "why");
  }
}

TEST(WireTest, MalformedLineIsInvalidArgument) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  ASSERT_EQ(::write(a.get(), "[1,2]\n", 6), 6);
  MessageReader reader(b.get());
  EXPECT_EQ(reader.Read().error().code(), Code::kInvalidArgument);
}

TEST(WireTest, OkResultKeepsFields) {
  Message m = OkResult({{"id", "wl-1"}});
  EXPECT_TRUE(StatusFromResult(m).ok());
  EXPECT_EQ(m["id"], "wl-1");
  EXPECT_EQ(m["type"], "result");
}

}  // namespace
}  // namespace cedana::protocol
