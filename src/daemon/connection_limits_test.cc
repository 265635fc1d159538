#include "daemon/connection_limits.h"

#include <gtest/gtest.h>

namespace cedana::daemon {
namespace {

TEST(ConnectionLimitsTest, OneUserCannotTakeWhatOthersAndRootNeed) {
  ConnectionLimits limits({/*total=*/10, /*reserved_for_root=*/3, /*per_user=*/4});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(limits.Admit(1001), "") << i;
  std::string why = limits.Admit(1001);
  EXPECT_NE(why.find("uid 1001 has 4 connections"), std::string::npos) << why;
  // Another user still gets in, up to what root keeps for itself.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limits.Admit(1002 + i % 2), "") << i;
  EXPECT_NE(limits.Admit(1004).find("as many users' connections"), std::string::npos);
  // Root (slurmd registering a job) gets the reserved ones, then nothing more.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limits.Admit(0), "") << i;
  EXPECT_NE(limits.Admit(0).find("serves 10 connections already"), std::string::npos);
  EXPECT_EQ(limits.open(), 10);
  // Closing one of 1001's lets 1001 back in, and only once.
  limits.Release(0);
  limits.Release(1001);
  EXPECT_EQ(limits.Admit(1001), "");
  EXPECT_NE(limits.Admit(1001), "");
  EXPECT_EQ(limits.Admit(0), "");
}

TEST(ConnectionLimitsTest, ParkedConnectionsCountAgainstNoCapUntilTheyAreBack) {
  ConnectionLimits limits({/*total=*/10, /*reserved_for_root=*/3, /*per_user=*/2});
  ASSERT_EQ(limits.Admit(1001), "");
  ASSERT_EQ(limits.Admit(1001), "");
  EXPECT_NE(limits.Admit(1001), "");
  // Both wait for a dump slot: the user's other proxies may still connect.
  limits.Park(1001);
  limits.Park(1001);
  EXPECT_EQ(limits.open(), 2);
  ASSERT_EQ(limits.Admit(1001), "");
  ASSERT_EQ(limits.Admit(1001), "");
  EXPECT_NE(limits.Admit(1001), "");
  // Back from the queue they count again (over the cap for a moment), then end.
  limits.Unpark(1001);
  limits.Unpark(1001);
  EXPECT_EQ(limits.open(), 4);
  limits.Release(1001);
  limits.Release(1001);
  EXPECT_NE(limits.Admit(1001), "");  // still at its cap of 2
  limits.Release(1001);
  EXPECT_EQ(limits.Admit(1001), "");
  EXPECT_EQ(limits.open(), 2);
}

}  // namespace
}  // namespace cedana::daemon
