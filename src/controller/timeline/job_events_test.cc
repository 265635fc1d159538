#include "controller/timeline/job_events.h"

#include <gtest/gtest.h>

namespace cedana::controller {
namespace {

SlurmJobLife Life(std::string state, int64_t restarts, int64_t submit, int64_t start = 0) {
  SlurmJobLife j;
  j.job_id = 7;
  j.state = std::move(state);
  j.restart_count = restarts;
  j.submit_time = submit;
  j.start_time = start;
  return j;
}

// "kind/run@seconds" for each event, to compare whole lists at once.
std::vector<std::string> Names(const std::vector<JobEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    out.push_back(e.kind + "/" + std::to_string(e.run) + "@" + std::to_string(e.at_ms / 1000));
  return out;
}

TEST(EventsOfSlurmJob, APendingJobWasSubmittedAndHasNotStarted) {
  // A pending job's start time is slurmctld's forecast, not a start.
  EXPECT_EQ(Names(EventsOfSlurmJob(Life("PENDING", 0, 100, 500))),
            std::vector<std::string>{"submitted/0@100"});
}

TEST(EventsOfSlurmJob, ARunningJobStartedAndAPreemptedOneSaysWhen) {
  EXPECT_EQ(Names(EventsOfSlurmJob(Life("RUNNING", 0, 100, 110))),
            (std::vector<std::string>{"submitted/0@100", "started/0@110"}));
  SlurmJobLife preempted = Life("RUNNING", 0, 100, 110);
  preempted.preempt_time = 150;
  EXPECT_EQ(Names(EventsOfSlurmJob(preempted)),
            (std::vector<std::string>{"submitted/0@100", "started/0@110", "preempted/0@150"}));
}

TEST(EventsOfSlurmJob, AfterARequeueTheSubmitTimeIsTheRequeueOfThePreviousRun) {
  EXPECT_EQ(Names(EventsOfSlurmJob(Life("PENDING", 1, 160, 900))),
            std::vector<std::string>{"requeued/0@160"});
  EXPECT_EQ(Names(EventsOfSlurmJob(Life("RUNNING", 2, 300, 305))),
            (std::vector<std::string>{"requeued/1@300", "started/2@305"}));
}

TEST(EventsOfSlurmJob, ASettlingJobProvesNothingYet) {
  // While a requeue completes, the restart count has moved on but the times are the old run's.
  SlurmJobLife settling = Life("PENDING", 1, 100, 110);
  settling.settling = true;
  EXPECT_TRUE(EventsOfSlurmJob(settling).empty());
}

TEST(EventsOfSlurmJob, AnEndedJobSaysHowItEnded) {
  SlurmJobLife done = Life("COMPLETED", 1, 160, 170);
  done.end_time = 400;
  auto events = EventsOfSlurmJob(done);
  EXPECT_EQ(Names(events),
            (std::vector<std::string>{"requeued/0@160", "started/1@170", "ended/1@400"}));
  EXPECT_EQ(events.back().detail, "COMPLETED");
  // Cancelled while pending: slurmctld sets start and end to the same moment; it never ran.
  SlurmJobLife never = Life("CANCELLED", 0, 100, 200);
  never.end_time = 200;
  EXPECT_EQ(Names(EventsOfSlurmJob(never)),
            (std::vector<std::string>{"submitted/0@100", "ended/0@200"}));
}

TEST(JobTimeline, MergesCheckpointsInTimeAndARunsOwnOrder) {
  CheckpointRecord c;
  c.id = "ck-1";
  c.job_id = 7;
  c.created_ms = 150'400;
  c.reason = "preemption";
  c.restart_count = 0;
  c.size = 4096;
  c.duration_ms = 380;
  c.frozen_ms = 120;
  SlurmJobLife preempted = Life("RUNNING", 0, 100, 110);
  preempted.preempt_time = 150;
  std::vector<JobEvent> events = EventsOfSlurmJob(preempted);
  events.push_back(StartOfRun(7, 1, 170'000, "ck-1"));
  SlurmJobLife requeued = Life("RUNNING", 1, 150, 170);
  for (JobEvent& e : EventsOfSlurmJob(requeued))
    if (e.kind == kEventRequeued) events.push_back(e);
  auto timeline = JobTimeline(events, {c});
  // The requeue was stamped in the preemption's second, before the checkpoint's commit: equal
  // times keep a run's order (preempted before requeued), then time decides.
  EXPECT_EQ(Names(timeline),
            (std::vector<std::string>{"submitted/0@100", "started/0@110", "preempted/0@150",
                                      "requeued/0@150", "checkpoint/0@150", "started/1@170"}));
  const JobEvent& ck = timeline[4];
  EXPECT_EQ(ck.detail, "preemption");
  EXPECT_EQ(ck.checkpoint_id, "ck-1");
  EXPECT_EQ(ck.duration_ms, 380);
  EXPECT_EQ(ck.frozen_ms, 120);
  EXPECT_EQ(ck.size, 4096);
  EXPECT_EQ(timeline[5].detail, "resumed");
  EXPECT_EQ(timeline[5].checkpoint_id, "ck-1");
  EXPECT_EQ(StartOfRun(7, 0, 1, "").detail, "fresh");
}

TEST(JobTimeline, APreemptionNoLookCaughtIsDatedByItsCheckpoint) {
  CheckpointRecord c;
  c.id = "ck-2";
  c.created_ms = 151'000;
  c.duration_ms = 900;
  c.reason = "preemption";
  c.restart_count = 1;
  CheckpointRecord policy = c;
  policy.id = "ck-1";
  policy.reason = "policy";
  policy.created_ms = 120'000;
  auto timeline = JobTimeline({StartOfRun(7, 1, 100'000, "")}, {c, policy});
  ASSERT_EQ(timeline.size(), 4u);
  EXPECT_EQ(timeline[2].kind, kEventPreempted);
  EXPECT_EQ(timeline[2].run, 1);
  EXPECT_EQ(timeline[2].at_ms, 150'100);
  // One the watcher saw stays the only one.
  SlurmJobLife seen = Life("RUNNING", 1, 90, 100);
  seen.preempt_time = 150;
  EXPECT_EQ(Names(JobTimeline(EventsOfSlurmJob(seen), {c})),
            (std::vector<std::string>{"requeued/0@90", "started/1@100", "preempted/1@150",
                                      "checkpoint/1@151"}));
}

TEST(RecordedEvents, EachLookWritesOnlyWhatIsNewAndForgetsGoneJobs) {
  RecordedEvents recorded;
  auto first = EventsOfSlurmJob(Life("RUNNING", 0, 100, 110));
  ASSERT_EQ(recorded.New(first).size(), 2u);
  recorded.Mark(first, {7});
  SlurmJobLife preempted = Life("RUNNING", 0, 100, 110);
  preempted.preempt_time = 150;
  EXPECT_EQ(Names(recorded.New(EventsOfSlurmJob(preempted))),
            std::vector<std::string>{"preempted/0@150"});
  recorded.Mark({}, {});  // slurmctld forgot job 7
  EXPECT_EQ(recorded.size(), 0u);
  EXPECT_EQ(recorded.New(first).size(), 2u);
}

}  // namespace
}  // namespace cedana::controller
