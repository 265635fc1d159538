#include "controller/watch/slurm_jobs.h"

#include <gtest/gtest.h>

namespace cedana::controller {
namespace {

JobRecord Job(int64_t id, const std::string& state) {
  JobRecord j;
  j.job_id = id;
  j.name = "victim";
  j.user = "alice";
  j.state = state;
  return j;
}

TEST(DiffJobsTest, NewAndChangedJobsAreWrittenGoneOnesRemovedTheRestLeftAlone) {
  std::map<int64_t, JobRecord> before = {
      {1, Job(1, "RUNNING")}, {2, Job(2, "PENDING")}, {3, Job(3, "RUNNING")}};
  JobRecord enabled = Job(3, "RUNNING");
  enabled.enabled = true;  // what the node daemons report is not libslurm's to change
  JobChanges c =
      DiffJobs(before, {Job(1, "RUNNING"), Job(2, "RUNNING"), enabled, Job(4, "PENDING")});
  ASSERT_EQ(c.changed.size(), 2u);
  EXPECT_EQ(c.changed[0].job_id, 2);
  EXPECT_EQ(c.changed[1].job_id, 4);
  EXPECT_TRUE(c.removed.empty());
  c = DiffJobs(before, {Job(2, "PENDING")});
  EXPECT_TRUE(c.changed.empty());
  EXPECT_EQ(c.removed, (std::vector<int64_t>{1, 3}));
}

}  // namespace
}  // namespace cedana::controller
