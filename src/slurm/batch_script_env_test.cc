#include "slurm/batch_script_env.h"

#include <gtest/gtest.h>

#include "common/fs.h"

namespace cedana::slurm {
namespace {

std::string Victim() {
  auto text = fs::ReadFile(std::string(CEDANA_SLURM_TESTDATA) + "/victim.sbatch");
  EXPECT_TRUE(text.has_value()) << text.error().ToString();
  return text.has_value() ? *text : "";
}

TEST(BatchScriptEnv, VictimScriptFromTheDocs) {
  CedanaJobSettings s = ParseBatchScript(Victim());
  EXPECT_TRUE(s.enable_set);
  EXPECT_TRUE(s.enable);
  EXPECT_TRUE(s.label_set);
  EXPECT_EQ(s.label, "victim");
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_EQ(s.notes[0], "CEDANA_ENABLE=1 (#SBATCH line 8)");
  EXPECT_EQ(s.notes[1], "CEDANA_CHECKPOINT=victim (#SBATCH line 9)");
}

struct ScriptCase {
  const char* name;
  const char* script;
  bool enable_set, enable;
  bool label_set;
  const char* label;
};

class ScriptTable : public testing::TestWithParam<ScriptCase> {};

TEST_P(ScriptTable, Parses) {
  const ScriptCase& c = GetParam();
  CedanaJobSettings s = ParseBatchScript(c.script);
  EXPECT_EQ(s.enable_set, c.enable_set);
  EXPECT_EQ(s.enable, c.enable);
  EXPECT_EQ(s.label_set, c.label_set);
  EXPECT_EQ(s.label, c.label);
}

INSTANTIATE_TEST_SUITE_P(
    All, ScriptTable,
    testing::Values(
        ScriptCase{"none", "#!/bin/bash\n#SBATCH --job-name=x\necho hi\n", false, false, false, ""},
        ScriptCase{"empty", "", false, false, false, ""},
        ScriptCase{"all_in_one",
                   "#!/bin/sh\n#SBATCH --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=x\n", true,
                   true, true, "x"},
        ScriptCase{"space_form", "#SBATCH --export CEDANA_CHECKPOINT=lbl # c\n", false, false, true,
                   "lbl"},
        ScriptCase{"several_options_on_a_line",
                   "#SBATCH -N 1 --export=CEDANA_ENABLE=true --time=1\n", true, true, false, ""},
        ScriptCase{"quoted", "#SBATCH --export=\"CEDANA_CHECKPOINT=a b\"\n", false, false, true,
                   "a b"},
        ScriptCase{"enable_zero", "#SBATCH --export=CEDANA_ENABLE=0\n", true, false, false, ""},
        ScriptCase{
            "last_wins",
            "#SBATCH --export=CEDANA_CHECKPOINT=one\n#SBATCH --export=CEDANA_CHECKPOINT=two\n",
            false, false, true, "two"},
        ScriptCase{"stops_at_first_command",
                   "#!/bin/bash\n\n# comment\n#SBATCH --export=CEDANA_ENABLE=1\necho x\n"
                   "#SBATCH --export=CEDANA_CHECKPOINT=late\n",
                   true, true, false, ""},
        ScriptCase{"indented_directive_is_a_comment", "  #SBATCH --export=CEDANA_ENABLE=1\n", false,
                   false, false, ""},
        ScriptCase{"commented_out", "##SBATCH --export=CEDANA_ENABLE=1\n", false, false, false, ""},
        ScriptCase{"crlf", "#SBATCH --export=CEDANA_CHECKPOINT=w\r\n", false, false, true, "w"},
        ScriptCase{"other_vars_ignored", "#SBATCH --export=NONE,FOO=1,CEDANA_ENABLE\n", false,
                   false, false, ""},
        ScriptCase{"export_file_is_not_export", "#SBATCH --export-file=CEDANA_ENABLE=1\n", false,
                   false, false, ""}),
    [](const testing::TestParamInfo<ScriptCase>& info) { return std::string(info.param.name); });

TEST(BatchScriptEnv, EnvironmentArray) {
  const char* env[] = {"PATH=/bin", "CEDANA_CHECKPOINT=victim", nullptr, "CEDANA_ENABLE=yes"};
  CedanaJobSettings s = ParseEnvironment(env, 4);
  EXPECT_TRUE(s.enable_set && s.enable);
  EXPECT_TRUE(s.label_set);
  EXPECT_EQ(s.label, "victim");
  EXPECT_FALSE(ParseEnvironment(nullptr, 3).label_set);
}

TEST(BatchScriptEnv, ExplicitEnvironmentWins) {
  CedanaJobSettings script = ParseBatchScript(Victim());
  CedanaJobSettings env = ParseEnvironment(std::vector<std::string>{"CEDANA_CHECKPOINT=mine"});
  CedanaJobSettings m = Merge(script, env);
  EXPECT_TRUE(m.enable);
  EXPECT_EQ(m.label, "mine");
  EXPECT_EQ(m.notes.size(), 3u);
  CedanaJobSettings off =
      Merge(script, ParseEnvironment(std::vector<std::string>{"CEDANA_ENABLE=0"}));
  EXPECT_TRUE(off.enable_set);
  EXPECT_FALSE(off.enable);
}

// What the cli_filter adds to the submitting environment instead of an --export value.
TEST(BatchScriptEnv, CedanaOnlyExport) {
  using Vars = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(CedanaOnlyExport("CEDANA_ENABLE=1"), (Vars{{"CEDANA_ENABLE", "1"}}));
  EXPECT_EQ(CedanaOnlyExport("CEDANA_ENABLE=1,CEDANA_CHECKPOINT=v"),
            (Vars{{"CEDANA_ENABLE", "1"}, {"CEDANA_CHECKPOINT", "v"}}));
  EXPECT_EQ(CedanaOnlyExport("CEDANA_CHECKPOINT="), (Vars{{"CEDANA_CHECKPOINT", ""}}));
  for (const char* left_alone :
       {"",  // no --export: SLURM's default is ALL already
        "ALL", "ALL,CEDANA_ENABLE=1", "NONE", "NONE,CEDANA_ENABLE=1",  // the user's explicit choice
        "CEDANA_ENABLE=1,FOO=2",                                       // names another variable
        "CEDANA_ENABLE",     // a name to copy, not an assignment
        "CEDANA_ENABLE=1,",  // an empty item
        "CEDANA_=1", "cedana_enable=1"})
    EXPECT_EQ(CedanaOnlyExport(left_alone), Vars{}) << left_alone;
}

TEST(BatchScriptEnv, Directives) {
  std::vector<int> lines;
  auto d = SbatchDirectives("#!/bin/bash\n#SBATCH -J \"a b\" c\\ d # x\n", &lines);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], (std::vector<std::string>{"-J", "a b", "c d"}));
  EXPECT_EQ(lines, std::vector<int>{2});
}

}  // namespace
}  // namespace cedana::slurm
