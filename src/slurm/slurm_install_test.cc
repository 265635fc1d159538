#include "slurm/slurm_install.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "common/fs.h"

namespace cedana::slurm {
namespace {

class SlurmInstallTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cedana-slurm-install-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"/etc/slurm", "/plugins", "/bin", "/src", "/state"})
      ASSERT_TRUE(fs::MakeDirs(root_ + d).ok());
    paths_.slurm_conf = root_ + "/etc/slurm/slurm.conf";
    paths_.bin_dir = root_ + "/bin";
    paths_.record = root_ + "/state/slurm-setup.json";
    conf_ = "# test cluster\nClusterName=t\nPluginDir=" + root_ +
            "/plugins\nTaskPlugin=task/affinity,task/cgroup\n";
    Write(paths_.slurm_conf, conf_);
    for (const char* f : {kSpankSo, kJobSubmitSo, kCliFilterSo, kTaskSo, kSlurmBinary,
                          kNodeDaemonUnit, kControllerUnit})
      Write(root_ + "/src/" + f, std::string("contents of ") + f);
    options_.source_dirs = {root_ + "/src"};
    options_.restart = false;
    paths_.unit_dir = root_ + "/systemd";
    paths_.systemd_run_dir = root_ + "/run-systemd";  // absent: systemd does not manage the node
  }
  void TearDown() override { (void)fs::RemoveTree(root_); }

  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(fs::WriteFileAtomic(path, text).ok());
  }
  std::string Read(const std::string& path) {
    auto r = fs::ReadFile(path);
    return r.has_value() ? *r : "<missing>";
  }

  std::string root_, conf_;
  SlurmInstallPaths paths_;
  SetupOptions options_;
};

TEST_F(SlurmInstallTest, SetupThenDestroyRestoresEverything) {
  const std::string plugstack = root_ + "/etc/slurm/plugstack.conf";
  const std::string plugstack_before = "include /etc/slurm/plugstack.conf.d/*\n";
  Write(plugstack, plugstack_before);

  auto r = SetupSlurm(paths_, options_);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(Read(paths_.slurm_conf),
            "# test cluster\nClusterName=t\nPluginDir=" + root_ +
                "/plugins\nTaskPlugin=task/affinity,task/cgroup,task/cedana\n"
                "CliFilterPlugins=cli_filter/cedana\nJobSubmitPlugins=job_submit/cedana\n"
                "SlurmctldParameters=preempt_send_user_signal\n");
  EXPECT_EQ(Read(plugstack), plugstack_before + "required " + root_ + "/plugins/spank_cedana.so\n");
  EXPECT_EQ(Read(root_ + "/plugins/task_cedana.so"), "contents of task_cedana.so");
  EXPECT_EQ(Read(root_ + "/bin/cedana-slurm"), "contents of cedana-slurm");
  EXPECT_EQ(Read(paths_.slurm_conf + ".cedana-backup"), conf_);

  // Twice = once, and the backup stays the pristine file.
  std::string edited = Read(paths_.slurm_conf);
  ASSERT_TRUE(SetupSlurm(paths_, options_).has_value());
  EXPECT_EQ(Read(paths_.slurm_conf), edited);
  EXPECT_EQ(Read(paths_.slurm_conf + ".cedana-backup"), conf_);

  auto d = DestroySlurm(paths_, /*restart=*/false);
  ASSERT_TRUE(d.has_value()) << d.error().ToString();
  EXPECT_EQ(Read(paths_.slurm_conf), conf_);
  EXPECT_EQ(Read(plugstack), plugstack_before);
  for (const char* f : {kSpankSo, kJobSubmitSo, kCliFilterSo, kTaskSo})
    EXPECT_FALSE(fs::Exists(root_ + "/plugins/" + f)) << f;
  EXPECT_FALSE(fs::Exists(root_ + "/bin/cedana-slurm"));
  EXPECT_FALSE(fs::Exists(paths_.record));
  EXPECT_FALSE(fs::Exists(paths_.slurm_conf + ".cedana-backup"));
  EXPECT_FALSE(fs::Exists(plugstack + ".cedana-backup"));

  auto again = DestroySlurm(paths_, false);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), Code::kNotFound);
}

TEST_F(SlurmInstallTest, CreatedPlugstackIsRemovedByDestroy) {
  const std::string plugstack = root_ + "/etc/slurm/plugstack.conf";
  ASSERT_TRUE(SetupSlurm(paths_, options_).has_value());
  EXPECT_EQ(Read(plugstack), "required " + root_ + "/plugins/spank_cedana.so\n");
  ASSERT_TRUE(SetupSlurm(paths_, options_).has_value());  // still "did not exist before"
  ASSERT_TRUE(DestroySlurm(paths_, false).has_value());
  EXPECT_FALSE(fs::Exists(plugstack));
}

TEST_F(SlurmInstallTest, PlugStackConfigKeyIsFollowed) {
  const std::string plugstack = root_ + "/elsewhere.conf";
  Write(paths_.slurm_conf, conf_ + "PlugStackConfig=" + plugstack + "\n");
  auto layout = LocateSlurm(paths_);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->plugstack_conf, plugstack);
  EXPECT_EQ(layout->plugin_dir, root_ + "/plugins");
  EXPECT_EQ(layout->slurmd_pid_file, "/run/slurmd.pid");
}

// The node daemon believes a job proxy's job id only when task/cedana registered the job, so
// a setup without the task plugin would leave every enabled job unmanaged: it is refused.
TEST_F(SlurmInstallTest, MissingTaskPluginIsRefused) {
  ASSERT_EQ(::unlink((root_ + "/src/task_cedana.so").c_str()), 0);
  std::string before = Read(paths_.slurm_conf);
  auto r = SetupSlurm(paths_, options_);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("task_cedana.so"), std::string::npos) << r.error().ToString();
  EXPECT_EQ(Read(paths_.slurm_conf), before);
  EXPECT_FALSE(fs::Exists(root_ + "/plugins/spank_cedana.so"));
}

TEST_F(SlurmInstallTest, MissingRequiredFilesChangeNothing) {
  ASSERT_EQ(::unlink((root_ + "/src/spank_cedana.so").c_str()), 0);
  ASSERT_EQ(::unlink((root_ + "/src/cedana-slurm").c_str()), 0);
  auto r = SetupSlurm(paths_, options_);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_NE(r.error().message().find("spank_cedana.so, cedana-slurm"), std::string::npos)
      << r.error().message();
  EXPECT_EQ(Read(paths_.slurm_conf), conf_);
  EXPECT_FALSE(fs::Exists(paths_.record));
}

TEST_F(SlurmInstallTest, SlurmNotFound) {
  paths_.slurm_conf = root_ + "/nope/slurm.conf";
  auto r = SetupSlurm(paths_, options_);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_EQ(r.error().message().rfind("SLURM not found: ", 0), 0u) << r.error().message();
}

TEST_F(SlurmInstallTest, FirstSourceDirWins) {
  ASSERT_TRUE(fs::MakeDirs(root_ + "/src2").ok());
  Write(root_ + "/src2/spank_cedana.so", "newer");
  auto found = FindSourceFiles({root_ + "/src2", root_ + "/src"}, {kSpankSo, kTaskSo});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->at(kSpankSo), root_ + "/src2/spank_cedana.so");
  EXPECT_EQ(found->at(kTaskSo), root_ + "/src/task_cedana.so");
}

// A worker gets slurmd's plugins and the node daemon's unit, nothing of slurmctld's; slurm.conf
// gets the same edits as on every node.
TEST_F(SlurmInstallTest, WorkerRoleInstallsSlurmdsPartsOnly) {
  options_.role = NodeRole::kWorker;
  ASSERT_TRUE(::unlink((root_ + "/src/job_submit_cedana.so").c_str()) == 0);  // not needed here
  auto r = SetupSlurm(paths_, options_);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE(fs::Exists(root_ + "/plugins/spank_cedana.so"));
  EXPECT_TRUE(fs::Exists(root_ + "/plugins/task_cedana.so"));
  EXPECT_FALSE(fs::Exists(root_ + "/plugins/cli_filter_cedana.so"));
  EXPECT_FALSE(fs::Exists(root_ + "/bin/cedana-slurm"));
  EXPECT_EQ(Read(root_ + "/systemd/cedana.service"), "contents of cedana.service");
  EXPECT_FALSE(fs::Exists(root_ + "/systemd/cedana-slurm.service"));
  EXPECT_NE(Read(paths_.slurm_conf).find("JobSubmitPlugins=job_submit/cedana"), std::string::npos)
      << "slurm.conf must stay the same on every node";
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("`cedana daemon start`"), std::string::npos) << r->warnings[0];

  ASSERT_TRUE(DestroySlurm(paths_, false).has_value());
  EXPECT_FALSE(fs::Exists(root_ + "/systemd/cedana.service"));
  EXPECT_FALSE(fs::Exists(root_ + "/plugins/task_cedana.so"));
  EXPECT_EQ(Read(paths_.slurm_conf), conf_);
}

TEST_F(SlurmInstallTest, ControllerAndLoginRoles) {
  options_.role = NodeRole::kController;
  ASSERT_TRUE(::unlink((root_ + "/src/task_cedana.so").c_str()) == 0);
  ASSERT_TRUE(SetupSlurm(paths_, options_).has_value());
  EXPECT_TRUE(fs::Exists(root_ + "/plugins/job_submit_cedana.so"));
  EXPECT_TRUE(fs::Exists(root_ + "/bin/cedana-slurm"));
  EXPECT_TRUE(fs::Exists(root_ + "/systemd/cedana-slurm.service"));
  EXPECT_FALSE(fs::Exists(root_ + "/plugins/spank_cedana.so"));
  EXPECT_FALSE(fs::Exists(root_ + "/etc/slurm/plugstack.conf")) << "slurmctld reads no plugstack";
  ASSERT_TRUE(DestroySlurm(paths_, false).has_value());

  options_.role = NodeRole::kLogin;
  ASSERT_TRUE(SetupSlurm(paths_, options_).has_value());
  EXPECT_TRUE(fs::Exists(root_ + "/plugins/cli_filter_cedana.so"));
  EXPECT_TRUE(fs::Exists(root_ + "/plugins/spank_cedana.so"));
  EXPECT_FALSE(fs::Exists(root_ + "/plugins/job_submit_cedana.so"));
  EXPECT_FALSE(fs::Exists(root_ + "/bin/cedana-slurm"));
  EXPECT_TRUE(fs::Exists(root_ + "/etc/slurm/plugstack.conf"));
}

// Under systemd the unit is enabled and restarted, and destroy disables it; systemctl here is a
// script that records its arguments.
TEST_F(SlurmInstallTest, UnitsAreStartedUnderSystemd) {
  ASSERT_TRUE(fs::MakeDirs(paths_.systemd_run_dir).ok());
  paths_.systemctl = root_ + "/systemctl";
  Write(paths_.systemctl, "#!/bin/sh\necho \"$*\" >>" + root_ + "/systemctl.log\n");
  ASSERT_EQ(::chmod(paths_.systemctl.c_str(), 0755), 0);
  options_.role = NodeRole::kWorker;
  auto r = SetupSlurm(paths_, options_);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE(r->warnings.empty());
  ASSERT_TRUE(DestroySlurm(paths_, false).has_value());
  EXPECT_EQ(Read(root_ + "/systemctl.log"),
            "daemon-reload\nenable cedana.service\nrestart cedana.service\n"
            "disable --now cedana.service\ndaemon-reload\n");
}

// A plugin built for another SLURM version than the node runs is refused before any change.
TEST_F(SlurmInstallTest, PluginsForAnotherSlurmVersionAreRefused) {
  auto plugin = fs::ReadFile(CEDANA_FAKE_PLUGIN_241105);
  ASSERT_TRUE(plugin.has_value());
  for (const char* f : {kSpankSo, kJobSubmitSo, kCliFilterSo, kTaskSo})
    Write(root_ + "/src/" + f, *plugin);
  options_.slurm_version = "22.05.8";
  auto r = SetupSlurm(paths_, options_);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kFailedPrecondition);
  EXPECT_NE(r.error().message().find("built for SLURM 24.11.5 but this node runs SLURM 22.05.8"),
            std::string::npos)
      << r.error().message();
  EXPECT_EQ(Read(paths_.slurm_conf), conf_);
  EXPECT_FALSE(fs::Exists(paths_.record));

  options_.slurm_version = "24.11.5";
  ASSERT_TRUE(SetupSlurm(paths_, options_).has_value());
  EXPECT_NE(Read(paths_.slurm_conf).find("PreemptParameters=send_user_signal"), std::string::npos);
}

}  // namespace
}  // namespace cedana::slurm
