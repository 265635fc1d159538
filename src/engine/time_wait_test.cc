#include "engine/time_wait.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "engine/tcp_connections.h"

namespace cedana::engine {
namespace {

constexpr int kTcpTimeWait = 6;

// The TIME_WAIT sockets on loopback whose local port is `port`.
int TimeWaitOn(uint16_t port) {
  std::ifstream in("/proc/net/tcp");
  std::stringstream text;
  text << in.rdbuf();
  auto sockets = ParseProcNetTcp(text.str(), false);
  int n = 0;
  if (sockets.has_value())
    for (const TcpSocket& s : *sockets) n += s.state == kTcpTimeWait && s.local.port == port;
  return n;
}

// A loopback connection whose listening side closes first, leaving a TIME_WAIT socket on the
// listener's port; returns that port.
uint16_t LeaveTimeWait() {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.get(), 1) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 0;
  UniqueFd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  accepted.Reset();  // the accepting side closes first: its end goes to TIME_WAIT
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  client.Reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return ntohs(addr.sin_port);
}

TEST(TimeWaitTest, NoPortsEndNothing) {
  auto ended = EndTimeWait({});
  ASSERT_TRUE(ended.has_value()) << ended.error().ToString();
  EXPECT_EQ(*ended, 0);
}

TEST(TimeWaitTest, EndsTheTimeWaitSocketsOnTheGivenPortsOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "ending sockets needs CAP_NET_ADMIN";
  uint16_t mine = LeaveTimeWait(), other = LeaveTimeWait();
  ASSERT_NE(mine, 0);
  ASSERT_NE(other, 0);
  ASSERT_EQ(TimeWaitOn(mine), 1);
  ASSERT_EQ(TimeWaitOn(other), 1);
  auto ended = EndTimeWait({mine});
  ASSERT_TRUE(ended.has_value()) << ended.error().ToString();
  EXPECT_EQ(*ended, 1);
  EXPECT_EQ(TimeWaitOn(mine), 0);
  EXPECT_EQ(TimeWaitOn(other), 1) << "a TIME_WAIT socket on a port not asked for was ended";
  // A bind to the freed port works again without SO_REUSEADDR.
  UniqueFd again(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(mine);
  EXPECT_EQ(::bind(again.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
      << std::strerror(errno);
  (void)EndTimeWait({other});
}

}  // namespace
}  // namespace cedana::engine
