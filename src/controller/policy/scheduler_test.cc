#include "controller/policy/scheduler.h"

#include <gtest/gtest.h>

namespace cedana::controller {
namespace {

JobRecord Job(int64_t id, std::string user, std::string label) {
  JobRecord j;
  j.job_id = id;
  j.name = "train-" + std::to_string(id);
  j.user = std::move(user);
  j.partition = "high";
  j.state = "RUNNING";
  j.enabled = true;
  j.label = std::move(label);
  j.agent_node = "node-a";
  return j;
}

TEST(SchedulerTest, SelectorFieldsMustAllMatch) {
  PolicyRecord p;
  p.owner = "root";
  EXPECT_TRUE(Matches(p, true, Job(1, "alice", "x")));
  p.selector.name_pattern = "train-*";
  p.selector.partition = "high";
  EXPECT_TRUE(Matches(p, true, Job(1, "alice", "x")));
  p.selector.label = "y";
  EXPECT_FALSE(Matches(p, true, Job(1, "alice", "x")));
  p.selector.label = "";
  p.selector.job_id = 2;
  EXPECT_FALSE(Matches(p, true, Job(1, "alice", "x")));
  p.selector.job_id.reset();
  p.selector.name_pattern = "eval-*";
  EXPECT_FALSE(Matches(p, true, Job(1, "alice", "x")));
}

TEST(SchedulerTest, AUsersPolicySelectsOnlyTheirJobs) {
  PolicyRecord p;
  p.owner = "alice";
  EXPECT_TRUE(Matches(p, false, Job(1, "alice", "x")));
  EXPECT_FALSE(Matches(p, false, Job(2, "bob", "x")));
}

TEST(SchedulerTest, QueuesWhenDueAndNotTwice) {
  auto db = OpenDatabase("sqlite::memory:");
  ASSERT_TRUE(db.has_value());
  ASSERT_TRUE(Migrate(**db).ok());
  Catalog c(std::move(db).value());
  ASSERT_TRUE(c.jobs().Sync({Job(7, "alice", "l")}).ok());
  ASSERT_TRUE(c.jobs().SyncManaged("node-a", {{7, "l", "alice", "running"}}).ok());
  PolicyRecord p;
  p.name = "p";
  p.interval_seconds = 60;
  p.owner = "root";
  p.owner_is_admin = true;
  auto created = c.policies().Create(p);
  ASSERT_TRUE(created.has_value());
  int64_t t0 = created->created_ms;
  EXPECT_EQ(SchedulePolicies(c, t0 + 1000).value(), 0);    // not due yet
  EXPECT_EQ(SchedulePolicies(c, t0 + 61000).value(), 1);   // due
  EXPECT_EQ(SchedulePolicies(c, t0 + 122000).value(), 0);  // one in flight already
  auto ops = c.operations().List(std::nullopt, OperationState::kQueued, 10);
  ASSERT_EQ(ops->size(), 1u);
  EXPECT_EQ(ops->at(0).node, "node-a");
  EXPECT_EQ(ops->at(0).owner, "alice");
  EXPECT_EQ(ops->at(0).reason, "policy");  // recorded with the checkpoint it makes
}

TEST(SchedulerTest, MaxCheckpointsKeepsTheNewestOfThePolicy) {
  PolicyRecord p;
  p.id = 3;
  p.max_checkpoints = 2;
  std::vector<CheckpointRecord> of_label(4);
  for (int i = 0; i < 4; ++i) {
    of_label[i].id = "c" + std::to_string(i);
    of_label[i].policy_id = i == 1 ? std::optional<int64_t>() : std::optional<int64_t>(3);
  }
  EXPECT_EQ(PolicyCheckpointsToDelete(p, of_label), std::vector<std::string>{"c3"});
  p.max_checkpoints.reset();
  EXPECT_TRUE(PolicyCheckpointsToDelete(p, of_label).empty());
}

}  // namespace
}  // namespace cedana::controller
