#include "daemon/srun_steps.h"

#include <gtest/gtest.h>

namespace cedana::daemon {
namespace {

using Env = std::vector<std::string>;

TEST(SrunStepsTest, TheRelayGoesFirstInPathAndSrunGetsThePathBack) {
  const Env job = {"HOME=/home/u", "PATH=/opt/bin:/usr/bin"};
  Env with_relay = job;
  AddSrunRelay("/usr/local/libexec/cedana", &with_relay);
  EXPECT_EQ(with_relay, (Env{"HOME=/home/u", "PATH=/usr/local/libexec/cedana:/opt/bin:/usr/bin",
                             "CEDANA_SRUN_RELAY=/usr/local/libexec/cedana"}));
  EXPECT_EQ(SrunEnvironment(with_relay, {"CEDANA_STEP=st-1"}),
            (Env{"HOME=/home/u", "PATH=/opt/bin:/usr/bin", "CEDANA_STEP=st-1"}));
}

TEST(SrunStepsTest, APathTheScriptChangedKeepsItsOwnEntries) {
  // The script put its own dir first and the relay twice; only the relay's entries go.
  const Env relay_env = {"PATH=/mine:/usr/local/libexec/cedana:/usr/bin:/usr/local/libexec/cedana",
                         "CEDANA_SRUN_RELAY=/usr/local/libexec/cedana", "CEDANA_STEP=st-old"};
  EXPECT_EQ(SrunEnvironment(relay_env, {}), (Env{"PATH=/mine:/usr/bin"}));
}

TEST(SrunStepsTest, ARestoreReplacesEveryPipeWhoseOtherEndWasOutsideTheTree) {
  const nlohmann::json steps = nlohmann::json::parse(R"([
    {"argv": ["srun", "x"], "relay_ns_pid": 2, "status_ino": 10,
     "tasks": [{"rank": 0, "ns_pid": 4, "pipes": [{"fd": 1, "ino": 11}, {"fd": 2, "ino": 12},
                                                  {"fd": 10, "ino": 13}]}]},
    {"argv": ["srun", "y"], "relay_ns_pid": 5, "status_ino": 20, "tasks": []}])");
  EXPECT_EQ(StepPipesOf(steps),
            (std::vector<StepPipe>{{10, true}, {11, false}, {12, false}, {13, false}, {20, true}}));
  EXPECT_TRUE(StepPipesOf(nlohmann::json::array()).empty());
  EXPECT_TRUE(StepPipesOf(nlohmann::json()).empty()) << "a checkpoint without steps";
}

}  // namespace
}  // namespace cedana::daemon
