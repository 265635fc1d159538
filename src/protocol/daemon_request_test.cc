#include "protocol/daemon_request.h"

#include <gtest/gtest.h>

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
        Case{"DumpOnPreemption", R"({"v":1,"op":"dump","id":"w","reason":"preemption"})", Code::kOk},
        Case{"DumpForNoKnownReason", R"({"v":1,"op":"dump","id":"w","reason":"whim"})", Code::kInvalidArgument},
        Case{"DumpReasonEmpty", R"({"v":1,"op":"dump","id":"w","reason":""})", Code::kInvalidArgument},
        Case{"DumpWithDeadline", R"({"v":1,"op":"dump","id":"w","deadline_ms":1798000000000})", Code::kOk},
        Case{"DumpDeadlineNegative", R"({"v":1,"op":"dump","id":"w","deadline_ms":-1})", Code::kInvalidArgument},
        Case{"DumpDeadlineAsText", R"({"v":1,"op":"dump","id":"w","deadline_ms":"soon"})", Code::kInvalidArgument},
        Case{"SlurmJobStart", R"({"v":1,"op":"slurm_job_start","job_id":"7","uid":1000})", Code::kOk},
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
        Case{"Streams1000", R"({"v":1,"op":"dump","pid":3,"streams":1000})", Code::kInvalidArgument},
        Case{"SignalZero", R"({"v":1,"op":"kill","id":"w","signal":0})", Code::kInvalidArgument},
        Case{"LabelTraversal", R"({"v":1,"op":"checkpoints","label":"../x"})", Code::kInvalidArgument},
        Case{"RunEmptyLabel", R"({"v":1,"op":"run","argv":["a"],"label":""})", Code::kInvalidArgument},
        Case{"RestoreEmptyLabelIsNone", R"({"v":1,"op":"restore","checkpoint_id":"c","label":""})",
             Code::kOk},
        Case{"JobIdNotDigits", R"({"v":1,"op":"run","argv":["a"],"job_id":"12; rm"})",
             Code::kInvalidArgument},
        Case{"UidAllOnes", R"({"v":1,"op":"slurm_job_start","job_id":"7","uid":4294967295})",
             Code::kInvalidArgument},
        Case{"SlurmJobStartWithoutUid", R"({"v":1,"op":"slurm_job_start","job_id":"7"})",
             Code::kInvalidArgument},
        Case{"LeaveRunningAsString", R"({"v":1,"op":"dump","pid":3,"leave_running":"yes"})",
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

}  // namespace
}  // namespace cedana::protocol
