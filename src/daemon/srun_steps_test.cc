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

// A relay restored into a later run of its job (resubmitted after a scancel): srun gets this
// run's allocation, and everything else the script had.
TEST(SrunStepsTest, ARestoredRelaysSrunGetsTheJobsSlurmVariablesOfThisRun) {
  const Env relay_env = {"SLURM_JOB_ID=6",  "SLURM_JOBID=6", "SLURM_NODELIST=compute-01",
                         "SLURM_MINE=kept", "HOME=/home/u",  "PATH=/usr/bin"};
  const Env now = {"SLURM_JOB_ID=7", "SLURM_JOBID=7", "SLURM_NODELIST=compute-[01-02]",
                   "HOME=/elsewhere", "SLURMD_NODENAME=compute-01"};
  EXPECT_EQ(SrunEnvironment(relay_env, {"CEDANA_STEP=st-1"}, now),
            (Env{"SLURM_JOB_ID=7", "SLURM_JOBID=7", "SLURM_NODELIST=compute-[01-02]",
                 "SLURM_MINE=kept", "HOME=/home/u", "PATH=/usr/bin", "CEDANA_STEP=st-1"}));
  EXPECT_EQ(SrunEnvironment(relay_env, {}), relay_env) << "a relay of this run keeps its own";
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
