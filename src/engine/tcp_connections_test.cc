#include "engine/tcp_connections.h"

#include <gtest/gtest.h>

namespace cedana::engine {
namespace {

constexpr char kHeader[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n";

TEST(TcpConnectionsTest, ParsesIpv4AndIpv6Lines) {
  std::string v4 = std::string(kHeader) +
                   "   0: 0100007F:33FA 00000000:0000 0A 00000000:00000000 00:00000000 00000000    "
                   " 0        0 15077000 1 0 100 0 0 10 0\n"
                   "   1: 0100007F:1F90 0500000A:1538 01 00000000:00000000 00:00000000 00000000  "
                   "1000        0 42 1 0 20 4 30 10 -1\n";
  auto sockets = ParseProcNetTcp(v4, false);
  ASSERT_TRUE(sockets.has_value()) << sockets.error().ToString();
  ASSERT_EQ(sockets->size(), 2u);
  EXPECT_EQ(FormatEndpoint((*sockets)[0].local), "127.0.0.1:13306");
  EXPECT_EQ((*sockets)[0].state, 10);
  EXPECT_EQ(FormatEndpoint((*sockets)[1].remote), "10.0.0.5:5432");
  EXPECT_EQ((*sockets)[1].inode, 42u);

  std::string v6 =
      std::string(kHeader) +
      "   0: 00000000000000000000000001000000:0050 00000000000000000000000001000000:D431 01 "
      "00000000:00000000 00:00000000 00000000     0        0 77 1 0 20 4 30 10 -1\n";
  auto six = ParseProcNetTcp(v6, true);
  ASSERT_TRUE(six.has_value()) << six.error().ToString();
  ASSERT_EQ(six->size(), 1u);
  EXPECT_EQ(FormatEndpoint((*six)[0].local), "[::1]:80");
  EXPECT_EQ((*six)[0].remote.port, 0xD431);
}

TEST(TcpConnectionsTest, MalformedLinesAreNamed) {
  auto bad = ParseProcNetTcp(std::string(kHeader) + "   0: 0100007F 00000000:0000 0A\n", false);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("0100007F 00000000:0000 0A"), std::string::npos);
}

TEST(TcpConnectionsTest, ConnectionsAreInternalOnlyWhenTheTreeHoldsBothEnds) {
  const TcpEndpoint server{"127.0.0.1", 4000}, client{"127.0.0.1", 51000}, db{"10.0.0.5", 5432},
      mine{"10.0.0.9", 42000}, other{"127.0.0.1", 52000};
  std::vector<TcpSocket> net = {
      {1, server, {"0.0.0.0", 0}, 10},  // listening: never a connection
      {2, server, client, 1},           // accepted end of a loopback pair...
      {3, client, server, 1},           // ...and its connecting end: both in the tree
      {4, mine, db, 1},                 // to a server outside the job
      {5, server, other, 1},            // loopback, but the client is another process's
      {6, other, server, 1},
      {0, client, {"127.0.0.1", 4001}, 6},          // TIME_WAIT: no process holds it
      {7, {"127.0.0.1", 4002}, {"0.0.0.0", 0}, 7},  // closed
  };
  auto conns = ConnectionsOf(net, {1, 2, 3, 4, 5, 7});
  ASSERT_EQ(conns.size(), 4u);
  EXPECT_TRUE(conns[0].internal);
  EXPECT_TRUE(conns[1].internal);
  EXPECT_FALSE(conns[2].internal);
  EXPECT_EQ(FormatEndpoint(conns[2].remote), "10.0.0.5:5432");
  EXPECT_FALSE(conns[3].internal);
  EXPECT_EQ(FormatEndpoint(conns[3].remote), "127.0.0.1:52000");
}

TEST(TcpConnectionsTest, LocalPortsAreTheTreesBoundPorts) {
  std::vector<TcpSocket> net = {
      {1, {"0.0.0.0", 4000}, {"0.0.0.0", 0}, 10},         // the tree's listener
      {2, {"127.0.0.1", 51000}, {"127.0.0.1", 80}, 1},    // its connection
      {3, {"0.0.0.0", 4003}, {"0.0.0.0", 0}, 7},          // bound, not listening
      {4, {"0.0.0.0", 0}, {"0.0.0.0", 0}, 7},             // unbound: no port
      {9, {"0.0.0.0", 5000}, {"0.0.0.0", 0}, 10},         // another process's
      {0, {"127.0.0.1", 4000}, {"127.0.0.1", 52000}, 6},  // TIME_WAIT: nobody's
  };
  EXPECT_EQ(LocalPortsOf(net, {1, 2, 3, 4}), (std::set<uint16_t>{4000, 4003, 51000}));
}

}  // namespace
}  // namespace cedana::engine
