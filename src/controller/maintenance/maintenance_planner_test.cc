#include "controller/maintenance/maintenance_planner.h"

#include <map>

#include <gtest/gtest.h>

namespace cedana::controller {
namespace {

constexpr int64_t kNow = 1'000'000;

bool SameNode(const std::string& a, const std::string& b) { return a == b; }

SlurmReservation Maint(std::string name, std::string nodes, int64_t start, int64_t end) {
  return {std::move(name), std::move(nodes), start, end, /*max_start_delay=*/5, /*maint=*/true};
}

JobRecord Job(int64_t id, std::string node, bool enabled = true, std::string state = "RUNNING") {
  JobRecord j;
  j.job_id = id;
  j.node = std::move(node);
  j.state = std::move(state);
  j.user = "alice";
  j.enabled = enabled;
  j.agent_node = enabled ? j.node : "";
  return j;
}

TEST(MaintenancePlanner, MovesEnabledJobsOnReservedNodesWithinTheLead) {
  MaintenanceInputs in;
  in.now = kNow;
  in.reservations = {Maint("maint_window", "a", kNow + 30, kNow + 3600)};
  in.jobs = {Job(1, "a"), Job(2, "b"), Job(3, "a", /*enabled=*/false),
             Job(4, "a", true, "PENDING")};
  MaintenancePlan plan = PlanMaintenance(in, SameNode);
  ASSERT_EQ(plan.moves.size(), 1u);
  EXPECT_EQ(plan.moves[0].job.job_id, 1);
  EXPECT_EQ(plan.moves[0].window, "maint_window");
  ASSERT_EQ(plan.windows.size(), 1u);
  EXPECT_EQ(plan.windows[0].status, "scheduled");
  EXPECT_EQ(plan.windows[0].warnings, "");
}

TEST(MaintenancePlanner, WaitsUntilTheLeadAndIgnoresOtherReservations) {
  MaintenanceInputs in;
  in.now = kNow;
  in.jobs = {Job(1, "a")};
  in.reservations = {Maint("later", "a", kNow + 600, kNow + 3600)};
  SlurmReservation plain = Maint("not_maint", "a", kNow, kNow + 3600);
  plain.maint = false;
  in.reservations.push_back(plain);
  MaintenancePlan plan = PlanMaintenance(in, SameNode);
  EXPECT_TRUE(plan.moves.empty());
  ASSERT_EQ(plan.windows.size(), 1u);
  EXPECT_EQ(plan.windows[0].name, "later");
}

TEST(MaintenancePlanner, MovesAJobOncePerWindow) {
  MaintenanceInputs in;
  in.now = kNow;
  in.reservations = {Maint("w", "a", kNow + 10, kNow + 3600)};
  in.jobs = {Job(1, "a")};
  in.moves = {MoveRecord{1, "w", 1, "alice", "requeued", "", kNow * 1000}};
  EXPECT_TRUE(PlanMaintenance(in, SameNode).moves.empty());
}

TEST(MaintenancePlanner, StatusFollowsTheClockAndTheReservationsFate) {
  MaintenanceInputs in;
  in.now = kNow;
  in.reservations = {Maint("on", "a", kNow - 10, kNow + 10),
                     Maint("over", "a", kNow - 20, kNow - 10)};
  in.known = {WindowRecord{"deleted", "a", kNow + 100, kNow + 200, 5, "scheduled", ""},
              WindowRecord{"ended", "a", kNow - 200, kNow - 100, 5, "active", ""},
              WindowRecord{"old", "a", kNow - 200, kNow - 100, 5, "completed", ""}};
  MaintenancePlan plan = PlanMaintenance(in, SameNode);
  std::map<std::string, std::string> status;
  for (const auto& w : plan.windows) status[w.name] = w.status;
  EXPECT_EQ(status["on"], "active");
  EXPECT_EQ(status["over"], "completed");
  EXPECT_EQ(status["deleted"], "cancelled");
  EXPECT_EQ(status["ended"], "completed");
  EXPECT_EQ(status.count("old"), 0u) << "unchanged windows are not rewritten";
}

TEST(MaintenancePlanner, WarnsAboutMissingMaxStartDelayAndJobRequeue) {
  MaintenanceInputs in;
  in.now = kNow;
  SlurmReservation r = Maint("w", "a", kNow + 100, kNow + 200);
  r.max_start_delay = 0;
  in.reservations = {r};
  in.requeue_enabled = false;
  MaintenancePlan plan = PlanMaintenance(in, SameNode);
  ASSERT_EQ(plan.windows.size(), 1u);
  EXPECT_NE(plan.windows[0].warnings.find("no MaxStartDelay"), std::string::npos);
  EXPECT_NE(plan.windows[0].warnings.find("JobRequeue=0"), std::string::npos);
}

TEST(MaintenancePlanner, KnownUnchangedWindowIsNotRewritten) {
  MaintenanceInputs in;
  in.now = kNow;
  in.reservations = {Maint("w", "a", kNow + 1000, kNow + 2000)};
  in.known = {WindowRecord{"w", "a", kNow + 1000, kNow + 2000, 5, "scheduled", ""}};
  EXPECT_TRUE(PlanMaintenance(in, SameNode).windows.empty());
}

}  // namespace
}  // namespace cedana::controller
