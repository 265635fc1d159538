#include "job_proxy/job_deadlines.h"

#include <gtest/gtest.h>

namespace cedana::job_proxy {
namespace {

TEST(JobDeadlinesTest, PreemptionEndsAfterTheGraceTimeOrAfterKillWaitWithoutOne) {
  JobDeadlines d;
  d.kill_wait_seconds = 30;
  EXPECT_EQ(d.AfterPreemption(1000), 0);  // the grace time is unknown: no deadline
  d.grace_seconds = 15;
  EXPECT_EQ(d.AfterPreemption(1000), 1'015'000);
  d.grace_seconds = 0;  // requeued at once: SIGTERM, then KillWait
  EXPECT_EQ(d.AfterPreemption(1000), 1'030'000);
  EXPECT_EQ(d.AfterSigterm(2000), 2'030'000);
}

}  // namespace
}  // namespace cedana::job_proxy
