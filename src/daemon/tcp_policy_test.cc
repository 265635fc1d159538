#include "daemon/tcp_policy.h"

#include <gtest/gtest.h>

namespace cedana::daemon {
namespace {

const engine::TcpConnection kLoopbackPair{{"127.0.0.1", 4000}, {"127.0.0.1", 51000}, true};
const engine::TcpConnection kDatabase{{"10.0.0.9", 42000}, {"10.0.0.5", 5432}, false};

TEST(TcpPolicyTest, NoConnectionsNeedNothing) {
  auto d = DecideTcp({}, OutsideTcp::kRefuse);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->mode, TcpMode::kNone);
}

TEST(TcpPolicyTest, ConnectionsInsideTheTreeAreAlwaysEstablished) {
  for (OutsideTcp outside : {OutsideTcp::kRefuse, OutsideTcp::kClose, OutsideTcp::kEstablished}) {
    auto d = DecideTcp({kLoopbackPair, kLoopbackPair}, outside);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->mode, TcpMode::kEstablished);
    EXPECT_TRUE(d->all_internal);
  }
}

TEST(TcpPolicyTest, AnOutsidePeerIsRefusedByNameUnlessTheSettingSaysOtherwise) {
  auto refused = DecideTcp({kLoopbackPair, kDatabase}, OutsideTcp::kRefuse);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), Code::kUnsupported);
  EXPECT_NE(refused.error().message().find(
                "TCP connection to 10.0.0.5:5432 (from 10.0.0.9:42000) is outside the job"),
            std::string::npos);
  auto closed = DecideTcp({kLoopbackPair, kDatabase}, OutsideTcp::kClose);
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(closed->mode, TcpMode::kClose);
  auto kept = DecideTcp({kDatabase}, OutsideTcp::kEstablished);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->mode, TcpMode::kEstablished);
  EXPECT_FALSE(kept->all_internal);
}

TEST(TcpPolicyTest, NamesRoundTripAndBadValuesAreNamed) {
  for (TcpMode m : {TcpMode::kNone, TcpMode::kEstablished, TcpMode::kClose}) {
    auto back = ParseTcpModeName(TcpModeName(m));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, m);
  }
  auto bad = ParseOutsideTcp("open");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("refuse, established, close"), std::string::npos);
}

}  // namespace
}  // namespace cedana::daemon
