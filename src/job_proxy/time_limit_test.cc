#include "job_proxy/time_limit.h"

#include <gtest/gtest.h>

namespace cedana::job_proxy {
namespace {

constexpr std::time_t kEnd = 1'000'000;

TimeLimitInput At(std::time_t now) {
  TimeLimitInput in;
  in.now = now;
  in.end_time = kEnd;
  in.last_checkpoint_ms = 30'000;
  in.job_asks_requeue = true;
  return in;
}

TimeLimitPolicy Allowing() {
  TimeLimitPolicy p;
  p.site_allows_requeue = true;
  p.max_restarts = 3;
  p.margin_seconds = 20;
  return p;
}

TEST(TimeLimitTest, StartsTheLastCheckpointsDurationPlusTheMarginBeforeTheEnd) {
  EXPECT_EQ(DecideTimeLimit(At(kEnd - 51), Allowing()), TimeLimitAction::kWait);
  EXPECT_EQ(DecideTimeLimit(At(kEnd - 50), Allowing()), TimeLimitAction::kCheckpointAndRequeue);
  EXPECT_EQ(DecideTimeLimit(At(kEnd + 5), Allowing()), TimeLimitAction::kCheckpointAndRequeue)
      << "late, still";
  TimeLimitInput unmeasured = At(kEnd - 31);
  unmeasured.last_checkpoint_ms = 0;  // 10 s estimated
  EXPECT_EQ(DecideTimeLimit(unmeasured, Allowing()), TimeLimitAction::kWait);
  unmeasured.now = kEnd - 30;
  EXPECT_EQ(DecideTimeLimit(unmeasured, Allowing()), TimeLimitAction::kCheckpointAndRequeue);
}

TEST(TimeLimitTest, NoLimitNoAction) {
  TimeLimitInput in = At(kEnd);
  in.end_time = 0;
  EXPECT_EQ(DecideTimeLimit(in, Allowing()), TimeLimitAction::kWait);
}

TEST(TimeLimitTest, RequeuesOnlyWhenTheJobAsksTheSiteAllowsAndRestartsAreLeft) {
  TimeLimitInput in = At(kEnd - 10);
  in.job_asks_requeue = false;
  EXPECT_EQ(DecideTimeLimit(in, Allowing()), TimeLimitAction::kCheckpointAndRunOn);
  EXPECT_EQ(WhyNoRequeue(in, Allowing()), "") << "a job that did not ask is not told why";

  TimeLimitPolicy off = Allowing();
  off.site_allows_requeue = false;
  in.job_asks_requeue = true;
  EXPECT_EQ(DecideTimeLimit(in, off), TimeLimitAction::kCheckpointAndRunOn);
  EXPECT_NE(WhyNoRequeue(in, off).find("slurm.requeue_on_timeout is off"), std::string::npos);

  in.restart_count = 3;
  EXPECT_EQ(DecideTimeLimit(in, Allowing()), TimeLimitAction::kCheckpointAndRunOn);
  EXPECT_EQ(WhyNoRequeue(in, Allowing()),
            "the job was restarted 3 times already (slurm.max_restarts is 3)");
  in.restart_count = 2;
  EXPECT_EQ(DecideTimeLimit(in, Allowing()), TimeLimitAction::kCheckpointAndRequeue);
}

}  // namespace
}  // namespace cedana::job_proxy
