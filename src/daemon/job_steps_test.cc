#include "daemon/job_steps.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

namespace cedana::daemon {
namespace {

using std::chrono::milliseconds;

// A pidfd that stays unreadable while the test runs: this process's own.
int RunningSrun() { return static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)); }

bool Settled(pid_t) { return true; }
bool Unsettled(pid_t) { return false; }

JobStep Step(const std::string& name, int expected_tasks, int keepers) {
  JobStep s;
  s.name = name;
  s.workload_id = "wl-1";
  s.argv = {"srun", "-n2", "work"};
  s.srun_pidfd = RunningSrun();
  s.expected_tasks = expected_tasks;
  for (int rank = 0; rank < keepers; ++rank) s.keepers[rank] = StepKeeper{100 + rank, {}, {}};
  return s;
}

TEST(JobStepsTest, AWorkloadWithoutStepsIsHeldAtOnce) {
  JobSteps steps;
  EXPECT_TRUE(steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled).ok());
}

TEST(JobStepsTest, AStepWhoseTasksAreAllThereIsHeldAndNewRequestsWaitUntilTheCheckpointIsDone) {
  JobSteps steps;
  steps.Add(Step("st-1", 2, 2));
  ASSERT_TRUE(steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled).ok());
  Status refused = steps.Begin("wl-1");
  EXPECT_EQ(refused.code(), Code::kAborted) << refused.ToString();
  EXPECT_TRUE(steps.Begin("wl-2").ok()) << "another workload's steps go on";
  steps.CheckpointDone("wl-1");
  EXPECT_TRUE(steps.Begin("wl-1").ok());
  ASSERT_EQ(steps.Running("wl-1").size(), 1u);
  EXPECT_EQ(steps.Running("wl-1")[0].keepers.size(), 2u);
}

TEST(JobStepsTest, AStepStillStartingIsWaitedForThenRefusedAsUnavailable) {
  JobSteps steps;
  steps.Add(Step("st-1", 2, 1));
  Status s = steps.HoldForCheckpoint("wl-1", milliseconds(100), Settled);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("is starting (1 of 2 tasks)"), std::string::npos) << s.message();
  EXPECT_TRUE(steps.Begin("wl-1").ok()) << "a refused checkpoint holds nothing off";
}

// Its srun runs but no task came here: perhaps all its tasks are on other nodes, which the
// refusal says after the wait.
TEST(JobStepsTest, AStepWithNoTaskHereSaysItMayRunOnlyElsewhere) {
  JobSteps steps;
  steps.Add(Step("st-1", 0, 0));
  Status s = steps.HoldForCheckpoint("wl-1", milliseconds(60), Settled);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("all its tasks run on other nodes"), std::string::npos) << s.message();
  s = steps.HoldForCheckpoint("wl-1", milliseconds(60), Unsettled);
  EXPECT_NE(s.message().find("is starting (0 of ? tasks)"), std::string::npos) << s.message();
}

TEST(JobStepsTest, ATaskArrivingWhileTheCheckpointWaitsLetsItGoOn) {
  JobSteps steps;
  steps.Add(Step("st-1", 2, 1));
  std::thread second([&] {
    std::this_thread::sleep_for(milliseconds(100));
    JobStep placement;
    placement.expected_tasks = 2;
    steps.AddKeeper("st-1", 1, StepKeeper{101, {}, {}}, placement);
  });
  Status s = steps.HoldForCheckpoint("wl-1", milliseconds(5000), Settled);
  second.join();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(JobStepsTest, ARelayThatStillHoldsItsSocketIsWaitedFor) {
  JobSteps steps;
  steps.Add(Step("st-1", 1, 1));
  Status s = steps.HoldForCheckpoint("wl-1", milliseconds(60), Unsettled);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("its srun relay"), std::string::npos) << s.message();
}

TEST(JobStepsTest, ARequestInFlightIsWaitedFor) {
  JobSteps steps;
  ASSERT_TRUE(steps.Begin("wl-1").ok());
  Status s = steps.HoldForCheckpoint("wl-1", milliseconds(60), Settled);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  steps.End("wl-1");
  EXPECT_TRUE(steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled).ok());
}

TEST(JobStepsTest, StepsOutsideTheJobAreRefusedSayingWhy) {
  JobSteps steps;
  steps.Add(Step("st-1", 1, 1));
  steps.NotCaptured("st-1", "srun --mpi=pmi2: its ranks talk to slurmstepd");
  Status s = steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled);
  EXPECT_EQ(s.code(), Code::kUnsupported) << s.ToString();
  EXPECT_NE(s.message().find("srun --mpi=pmi2"), std::string::npos) << s.message();
}

TEST(JobStepsTest, AStepOnTwoNodesWaitsOnlyForItsTasksOnThisNode) {
  JobSteps steps;
  steps.Add(Step("st-2", 0, 0));
  JobStep placement;
  placement.expected_tasks = 1;  // of its 2: the other runs on compute-02
  placement.nodes = 2;
  placement.node_list = "compute-[01-02]";
  placement.node_name = "compute-01";
  steps.AddKeeper("st-2", 0, StepKeeper{100, {}, {}}, placement);
  EXPECT_TRUE(steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled).ok());
  std::optional<JobStep> s = steps.Find("st-2");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->nodes, 2);
  EXPECT_EQ(s->node_list, "compute-[01-02]");
  EXPECT_EQ(s->node_name, "compute-01");
}

TEST(JobStepsTest, TasksOnANodeComeFromSlurmsTasksPerNode) {
  EXPECT_EQ(TasksOnNode("1(x2)", 0), 1);
  EXPECT_EQ(TasksOnNode("1(x2)", 1), 1);
  EXPECT_EQ(TasksOnNode("1(x2)", 2), 0);
  EXPECT_EQ(TasksOnNode("2(x3),1", 2), 2);
  EXPECT_EQ(TasksOnNode("2(x3),1", 3), 1);
  EXPECT_EQ(TasksOnNode("3,1", 0), 3);
  EXPECT_EQ(TasksOnNode("3,1", 1), 1);
  EXPECT_EQ(TasksOnNode("4", 0), 4);
  EXPECT_EQ(TasksOnNode("", 0), 0);
  EXPECT_EQ(TasksOnNode("2(x", 0), 0);
  EXPECT_EQ(TasksOnNode("x", 0), 0);
}

TEST(JobStepsTest, EndedStepsAreNotWaitedForNorDescribed) {
  JobSteps steps;
  JobStep ended = Step("st-1", 2, 0);
  ::close(ended.srun_pidfd);
  ended.srun_pidfd = -1;  // its srun was gone before it could be watched
  steps.Add(ended);
  EXPECT_TRUE(steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled).ok());
  EXPECT_TRUE(steps.Running("wl-1").empty());
}

TEST(JobStepsTest, ARestoredStepIsCompleteWithTheKeepersThatWereRestored) {
  JobSteps steps;
  JobStep restored = Step("st-1", 0, 1);
  restored.restored = true;
  steps.Add(restored);
  EXPECT_TRUE(steps.HoldForCheckpoint("wl-1", milliseconds(0), Settled).ok());
}

TEST(JobStepsTest, ForgetDropsAWorkloadsSteps) {
  JobSteps steps;
  steps.Add(Step("st-1", 1, 1));
  steps.Forget("wl-1");
  EXPECT_FALSE(steps.Find("st-1").has_value());
  EXPECT_TRUE(steps.Running("wl-1").empty());
}

}  // namespace
}  // namespace cedana::daemon
