#include "daemon/agent_task.h"

#include <gtest/gtest.h>

namespace cedana::daemon {
namespace {

TEST(AgentTaskTest, ReadsWhatTheControllerSends) {
  // As ToJson(OperationRecord) writes it: nulls where nothing is set.
  nlohmann::json dump = {{"id", 7},           {"kind", "dump"},           {"job_id", 42},
                         {"owner", "bob"},    {"checkpoint_id", nullptr}, {"reason", "policy"},
                         {"state", "running"}};
  Result<AgentTask> t = ReadAgentTask(dump);
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(t->id, 7);
  EXPECT_EQ(t->kind, "dump");
  EXPECT_EQ(t->job, "42");
  EXPECT_EQ(t->reason, "policy");
  EXPECT_EQ(t->checkpoint_id, "");

  nlohmann::json restore = {{"id", 8},           {"kind", "restore"},
                            {"job_id", nullptr}, {"checkpoint_id", "20261204-010203-abcd"},
                            {"owner", "bob"},    {"reason", nullptr}};
  t = ReadAgentTask(restore);
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(t->job, "");
  EXPECT_EQ(t->checkpoint_id, "20261204-010203-abcd");
  EXPECT_EQ(t->reason, "manual");
}

TEST(AgentTaskTest, AMalformedTaskIsRefusedByName) {
  struct Case {
    nlohmann::json op;
    const char* expect;
  } cases[] = {
      {nlohmann::json::array(), "not a JSON object"},
      {{{"kind", "dump"}}, "\"id\" is missing"},
      {{{"id", "7"}, {"kind", "dump"}}, "operation field \"id\" must be an integer"},
      {{{"id", 7}, {"kind", 3}}, "operation field \"kind\" must be a string"},
      {{{"id", 7}, {"kind", "dump"}, {"job_id", "42"}},
       "operation field \"job_id\" must be an integer"},
      {{{"id", 7}, {"kind", "restore"}, {"checkpoint_id", 5}},
       "operation field \"checkpoint_id\" must be a string"},
  };
  for (const Case& c : cases) {
    Result<AgentTask> t = ReadAgentTask(c.op);
    ASSERT_FALSE(t.has_value()) << c.op.dump();
    EXPECT_EQ(t.error().code(), Code::kInvalidArgument);
    EXPECT_NE(t.error().message().find(c.expect), std::string::npos) << t.error().message();
  }
}

}  // namespace
}  // namespace cedana::daemon
