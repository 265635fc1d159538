#include "job_proxy/job_polling.h"

#include <gtest/gtest.h>

#include "job_proxy/time_limit.h"

namespace cedana::job_proxy {
namespace {

using std::chrono::milliseconds;

TEST(JobPollingTest, WithoutTheNoticeTheProxyAsksTwiceASecond) {
  EXPECT_EQ(NextPollIn(false, 1000, 0), kPollWithoutNotice);
  EXPECT_EQ(NextPollIn(false, 1000, 5000), kPollWithoutNotice);
}

TEST(JobPollingTest, WithTheNoticeEvery30sOrWhenTheTimeLimitActs) {
  EXPECT_EQ(NextPollIn(true, 1000, 0), kPollWithNotice);
  EXPECT_EQ(NextPollIn(true, 1000, 1000 + 3600), kPollWithNotice);
  EXPECT_EQ(NextPollIn(true, 1000, 1012), milliseconds(12'000));
  EXPECT_EQ(NextPollIn(true, 1000, 1000),
            kPollWithoutNotice);  // due: asked again soon, not in a loop
  EXPECT_EQ(NextPollIn(true, 1000, 900), kPollWithoutNotice);
}

TEST(JobPollingTest, TheTimeLimitIsNeverMissedBetweenTwoAsks) {
  // A job ending at 75 s: its checkpoint is due 30 s (10 s estimate + 20 s margin) before.
  TimeLimitPolicy policy;
  TimeLimitInput in{0, 75, 0, false, 0};
  const std::time_t acts_at = TimeLimitActsAt(in, policy);
  EXPECT_EQ(acts_at, 45);
  std::time_t t = 0;
  while (DecideTimeLimit({t, 75, 0, false, 0}, policy) == TimeLimitAction::kWait)
    t += std::chrono::duration_cast<std::chrono::seconds>(NextPollIn(true, t, acts_at)).count();
  EXPECT_EQ(t, 45) << "the first ask that finds the checkpoint due is the one at its time";
}

}  // namespace
}  // namespace cedana::job_proxy
