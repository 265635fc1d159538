#include "slurm/slurm_conf_editor.h"

#include <gtest/gtest.h>

namespace cedana::slurm {
namespace {

struct EditCase {
  const char* name;
  const char* before;
  const char* after;
};

class SlurmConfEdit : public testing::TestWithParam<EditCase> {};

TEST_P(SlurmConfEdit, AddsOnceAndKeepsTheRest) {
  const EditCase& c = GetParam();
  std::string once = AddCedanaToSlurmConf(c.before);
  EXPECT_EQ(once, c.after);
  EXPECT_EQ(AddCedanaToSlurmConf(once), once) << "not idempotent";
}

INSTANTIATE_TEST_SUITE_P(
    All, SlurmConfEdit,
    testing::Values(
        // The install page's example.
        EditCase{"docs", "# my cluster\nTaskPlugin=task/affinity,task/cgroup\n",
                 "# my cluster\nTaskPlugin=task/affinity,task/cgroup,task/cedana\n"
                 "CliFilterPlugins=cli_filter/cedana\nJobSubmitPlugins=job_submit/cedana\n"},
        EditCase{"absent_no_trailing_newline", "ClusterName=c",
                 "ClusterName=c\nTaskPlugin=task/affinity,task/cedana\n"
                 "CliFilterPlugins=cli_filter/cedana\nJobSubmitPlugins=job_submit/cedana\n"},
        EditCase{"case_spaces_and_comment",
                 "taskplugin = affinity   # pinning\n#JobSubmitPlugins=lua\nJOBSUBMITPLUGINS=lua\n"
                 "CliFilterPlugins=cli_filter/cedana\n",
                 "taskplugin = affinity,task/cedana   # pinning\n#JobSubmitPlugins=lua\n"
                 "JOBSUBMITPLUGINS=lua,job_submit/cedana\nCliFilterPlugins=cli_filter/cedana\n"},
        EditCase{"short_names_count",
                 "TaskPlugin=cedana\nJobSubmitPlugins=cedana\nCliFilterPlugins=cedana\n",
                 "TaskPlugin=cedana\nJobSubmitPlugins=cedana\nCliFilterPlugins=cedana\n"},
        EditCase{"none_replaced", "TaskPlugin=task/none\n",
                 "TaskPlugin=task/cedana\nCliFilterPlugins=cli_filter/cedana\n"
                 "JobSubmitPlugins=job_submit/cedana\n"}),
    [](const testing::TestParamInfo<EditCase>& info) { return std::string(info.param.name); });

TEST(SlurmConfEditor, PreemptNotice) {
  EXPECT_EQ(AddPreemptNoticeToSlurmConf("ClusterName=c\n", "22.05.8"),
            "ClusterName=c\nSlurmctldParameters=preempt_send_user_signal\n");
  const std::string other = "SlurmctldParameters=enable_configless,max_dbd_msg_action=discard\n";
  std::string once = AddPreemptNoticeToSlurmConf(other, "");
  EXPECT_EQ(once,
            "SlurmctldParameters=enable_configless,max_dbd_msg_action=discard,preempt_send_user_"
            "signal\n");
  EXPECT_EQ(AddPreemptNoticeToSlurmConf(once, ""), once) << "not idempotent";
}

// 23.02 moved the notice to PreemptParameters.
TEST(SlurmConfEditor, PreemptNoticeFrom2302On) {
  EXPECT_FALSE(PreemptNoticeInPreemptParameters("22.05.8"));
  EXPECT_TRUE(PreemptNoticeInPreemptParameters("23.02.0"));
  EXPECT_TRUE(PreemptNoticeInPreemptParameters("25.11.1"));
  EXPECT_EQ(AddPreemptNoticeToSlurmConf("ClusterName=c\n", "24.11.5"),
            "ClusterName=c\nPreemptParameters=send_user_signal\n");
  std::string once = AddPreemptNoticeToSlurmConf("PreemptParameters=strict_order\n", "25.11.1");
  EXPECT_EQ(once, "PreemptParameters=strict_order,send_user_signal\n");
  EXPECT_EQ(AddPreemptNoticeToSlurmConf(once, "25.11.1"), once) << "not idempotent";
}

TEST(SlurmConfEditor, EditsTheLastOccurrence) {
  EXPECT_EQ(AddPluginToList("JobSubmitPlugins=a\nJobSubmitPlugins=b\n", "JobSubmitPlugins",
                            "job_submit/cedana", "x"),
            "JobSubmitPlugins=a\nJobSubmitPlugins=b,job_submit/cedana\n");
}

TEST(SlurmConfEditor, Plugstack) {
  const std::string so = "/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_cedana.so";
  EXPECT_EQ(AddSpankToPlugstack("", so), "required " + so + "\n");
  std::string existing = "include /etc/slurm/plugstack.conf.d/*.conf";
  std::string once = AddSpankToPlugstack(existing, so);
  EXPECT_EQ(once, existing + "\nrequired " + so + "\n");
  EXPECT_EQ(AddSpankToPlugstack(once, so), once);
  // A commented-out line does not count.
  EXPECT_EQ(AddSpankToPlugstack("# required " + so + "\n", so),
            "# required " + so + "\nrequired " + so + "\n");
  // Any path to spank_cedana.so counts (installed by hand elsewhere).
  EXPECT_EQ(AddSpankToPlugstack("optional /opt/spank_cedana.so\n", so),
            "optional /opt/spank_cedana.so\n");
}

TEST(SlurmConfEditor, ReadKey) {
  std::string conf =
      "#PluginDir=/nope\npluginDIR = /a:/b  # two\nSlurmctldPidFile=\"/var/run/x.pid\"\n";
  EXPECT_EQ(ReadConfKey(conf, "PluginDir"), "/a:/b");
  EXPECT_EQ(PluginDir(conf), "/a");
  EXPECT_EQ(ReadConfKey(conf, "SlurmctldPidFile"), "/var/run/x.pid");
  EXPECT_EQ(ReadConfKey(conf, "SlurmdPidFile"), std::nullopt);
  EXPECT_EQ(ReadConfKeyOr(conf, "SlurmdPidFile", kDefaultSlurmdPidFile), "/run/slurmd.pid");
  EXPECT_EQ(PluginDir("ClusterName=x\n"), kDefaultPluginDir);
  // A key that is only a prefix of another does not match.
  EXPECT_EQ(ReadConfKey("PluginDirs=/x\n", "PluginDir"), std::nullopt);
}

}  // namespace
}  // namespace cedana::slurm
