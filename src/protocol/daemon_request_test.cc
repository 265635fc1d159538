#include "protocol/daemon_request.h"

#include <gtest/gtest.h>

#include <vector>

namespace cedana::protocol {
namespace {

struct Case {
  const char* name;
  const char* json;
  Code code;  // kOk: parses
};

class DaemonRequestTest : public testing::TestWithParam<Case> {};

TEST_P(DaemonRequestTest, ParsesOrRefusesWithTheExactCode) {
  const Case& c = GetParam();
  Result<DaemonRequest> r = ParseDaemonRequest(Message::parse(c.json));
  if (c.code == Code::kOk) {
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
  } else {
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), c.code) << r.error().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, DaemonRequestTest,
    testing::Values(
        Case{"Ping", R"({"v":1,"op":"ping"})", Code::kOk},
        Case{"RunWithEverything",
             R"({"v":1,"op":"run","argv":["a"],"env":["A=1"],"cwd":"/","label":"l-1","job_id":"12",
                 "owner_pid":5,"stdout_path":"/o","restore_label":true,"slurm_script":"/s"})",
             Code::kOk},
        Case{"DumpStreams64", R"({"v":1,"op":"dump","pid":3,"streams":64})", Code::kOk},
        Case{"DumpOnPreemption", R"({"v":1,"op":"dump","id":"w","reason":"preemption"})",
             Code::kOk},
        Case{"DumpForNoKnownReason", R"({"v":1,"op":"dump","id":"w","reason":"whim"})",
             Code::kInvalidArgument},
        Case{"DumpReasonEmpty", R"({"v":1,"op":"dump","id":"w","reason":""})",
             Code::kInvalidArgument},
        Case{"DumpWithDeadline", R"({"v":1,"op":"dump","id":"w","deadline_ms":1798000000000})",
             Code::kOk},
        Case{"DumpDeadlineNegative", R"({"v":1,"op":"dump","id":"w","deadline_ms":-1})",
             Code::kInvalidArgument},
        Case{"DumpDeadlineAsText", R"({"v":1,"op":"dump","id":"w","deadline_ms":"soon"})",
             Code::kInvalidArgument},
        Case{"SlurmJobStart", R"({"v":1,"op":"slurm_job_start","job_id":"7","uid":1000})",
             Code::kOk},
        Case{"NoVersion", R"({"op":"ping"})", Code::kInvalidArgument},
        Case{"VersionAsString", R"({"v":"1","op":"ping"})", Code::kInvalidArgument},
        Case{"OtherVersion", R"({"v":2,"op":"ping"})", Code::kInvalidArgument},
        Case{"OpNotAString", R"({"v":1,"op":7})", Code::kInvalidArgument},
        Case{"UnknownOp", R"({"v":1,"op":"format_disk"})", Code::kInvalidArgument},
        Case{"NotAnObject", R"([1])", Code::kInvalidArgument},
        Case{"ArgvWithANumber", R"({"v":1,"op":"run","argv":["a",1]})", Code::kInvalidArgument},
        Case{"PathWithNul", R"({"v":1,"op":"run","argv":["a"],"stdout_path":"/a\u0000b"})",
             Code::kInvalidArgument},
        Case{"PidPast32Bits", R"({"v":1,"op":"dump","pid":4294967301})", Code::kInvalidArgument},
        Case{"NegativePid", R"({"v":1,"op":"dump","pid":-1})", Code::kInvalidArgument},
        Case{"PidAsDouble", R"({"v":1,"op":"dump","pid":5.0})", Code::kInvalidArgument},
        Case{"StreamsZero", R"({"v":1,"op":"dump","pid":3,"streams":0})", Code::kInvalidArgument},
        Case{"Streams1000", R"({"v":1,"op":"dump","pid":3,"streams":1000})",
             Code::kInvalidArgument},
        Case{"SignalZero", R"({"v":1,"op":"kill","id":"w","signal":0})", Code::kInvalidArgument},
        Case{"LabelTraversal", R"({"v":1,"op":"checkpoints","label":"../x"})",
             Code::kInvalidArgument},
        Case{"RunEmptyLabel", R"({"v":1,"op":"run","argv":["a"],"label":""})",
             Code::kInvalidArgument},
        Case{"RestoreEmptyLabelIsNone", R"({"v":1,"op":"restore","checkpoint_id":"c","label":""})",
             Code::kOk},
        Case{"JobIdNotDigits", R"({"v":1,"op":"run","argv":["a"],"job_id":"12; rm"})",
             Code::kInvalidArgument},
        Case{"UidAllOnes", R"({"v":1,"op":"slurm_job_start","job_id":"7","uid":4294967295})",
             Code::kInvalidArgument},
        Case{"SlurmJobStartWithoutUid", R"({"v":1,"op":"slurm_job_start","job_id":"7"})",
             Code::kInvalidArgument},
        Case{"LeaveRunningAsString", R"({"v":1,"op":"dump","pid":3,"leave_running":"yes"})",
             Code::kInvalidArgument},
        Case{"Srun", R"({"v":1,"op":"srun","argv":["srun","hostname"],"caller_fds":[5]})",
             Code::kOk},
        Case{"SrunWithoutItsStatusPipe", R"({"v":1,"op":"srun","argv":["srun","hostname"]})",
             Code::kInvalidArgument},
        // With an op that reads no descriptors: the type is refused whichever op.
        Case{"CallerFdAsText", R"({"v":1,"op":"ping","caller_fds":["5"]})", Code::kInvalidArgument},
        Case{"CallerFdPastItsRange", R"({"v":1,"op":"srun","caller_fds":[4294967301]})",
             Code::kInvalidArgument},
        Case{
            "StepTask",
            R"({"v":1,"op":"step_task","step":"st-1","task":1,"argv":["a"],"caller_fds":[-1,4,5,6]})",
            Code::kOk},
        Case{"StepTaskWithoutItsStep", R"({"v":1,"op":"step_task","caller_fds":[-1,4,5,6]})",
             Code::kInvalidArgument},
        Case{"StepTaskWithThreeFds",
             R"({"v":1,"op":"step_task","step":"st-1","caller_fds":[-1,4,5]})",
             Code::kInvalidArgument},
        Case{"StepTaskWithoutItsOutput",
             R"({"v":1,"op":"step_task","step":"st-1","caller_fds":[-1,-1,5,6]})",
             Code::kInvalidArgument},
        Case{"NegativeTask",
             R"({"v":1,"op":"step_task","step":"st-1","task":-1,"caller_fds":[0,4,5,6]})",
             Code::kInvalidArgument}),
    [](const testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(DaemonRequestFieldsTest, FieldsArrive) {
  Result<DaemonRequest> r = ParseDaemonRequest(Message::parse(
      R"({"v":1,"op":"kill","id":"wl-1","signal":15,"unknown_field":{"ignored":true}})"));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->op, DaemonOp::kKill);
  EXPECT_EQ(r->id, "wl-1");
  EXPECT_EQ(r->signal_number, 15);
  EXPECT_EQ(DaemonOpName(r->op), "kill");
}

TEST(DaemonRequestFieldsTest, RequestOpNameNeverThrows) {
  EXPECT_EQ(RequestOpName(Message::parse(R"({"op":7})")), "");
  EXPECT_EQ(RequestOpName(Message::parse(R"([1])")), "");
  EXPECT_EQ(RequestOpName(Message::parse(R"({"op":"ps"})")), "ps");
}

// Every request a client builds comes back from the daemon's parser as it was built.
TEST(EncodeDaemonRequestTest, WhatIsEncodedParsesBackTheSame) {
  std::vector<DaemonRequest> requests(9);
  requests[0].op = DaemonOp::kPing;
  DaemonRequest& run = requests[1];
  run.op = DaemonOp::kRun;
  run.argv = {"/bin/sh", "-c", "echo \"a b\""};
  run.env = {"A=1", "PATH=/usr/bin"};
  run.cwd = "/home/u";
  run.label = "l-1";
  run.job_id = "12";
  run.stdout_path = "/o";
  run.stderr_path = "/e";
  run.restore_label = true;
  run.owner_pid = 5;
  run.slurm_script = "/var/spool/slurmd/job00012/slurm_script";
  DaemonRequest& dump = requests[2];
  dump.op = DaemonOp::kDump;
  dump.id = "w-1";
  dump.leave_running = true;
  dump.compression = "zstd";
  dump.streams = 64;
  dump.tcp = "established";
  dump.reason = "preemption";
  dump.deadline_ms = 1798000000000;
  dump.dir = "s3://bucket/prefix";
  DaemonRequest& by_pid = requests[3];
  by_pid.op = DaemonOp::kDump;
  by_pid.pid = 4242;
  DaemonRequest& kill = requests[4];
  kill.op = DaemonOp::kKill;
  kill.id = "w-1";
  kill.signal_number = SIGTERM;
  DaemonRequest& start = requests[5];
  start.op = DaemonOp::kSlurmJobStart;
  start.job_id = "7";
  start.uid = 0;  // root's job: the required uid is sent even when it is the default
  DaemonRequest& restore = requests[6];
  restore.op = DaemonOp::kRestore;
  restore.checkpoint_id = "20261202-101010-abcdef12";
  restore.label = "l-1";
  DaemonRequest& srun = requests[7];
  srun.op = DaemonOp::kSrun;
  srun.argv = {"srun", "-n2", "hostname"};
  srun.caller_fds = {7};
  DaemonRequest& task = requests[8];
  task.op = DaemonOp::kStepTask;
  task.step = "st-1a2b3c4d";
  task.task = 3;
  task.argv = {"hostname"};
  task.caller_fds = {-1, 4, 5, 6};
  for (const DaemonRequest& r : requests) {
    Message m = WithVersion(EncodeDaemonRequest(r));
    Result<DaemonRequest> back = ParseDaemonRequest(m);
    ASSERT_TRUE(back.has_value()) << m.dump() << ": " << back.error().ToString();
    EXPECT_TRUE(*back == r) << "changed on the way: " << m.dump();
  }
  EXPECT_EQ(EncodeDaemonRequest(requests[0]).dump(), R"({"op":"ping"})")
      << "only what differs is sent";
}

}  // namespace
}  // namespace cedana::protocol
