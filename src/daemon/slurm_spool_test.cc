#include "daemon/slurm_spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "common/fs.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::daemon {
namespace {

using storage::testing::TempDir;

TEST(SlurmSpoolTest, SpoolDirAndScriptPathAsSlurmdMakesThem) {
  EXPECT_EQ(SlurmdSpoolDir("ClusterName=c\n", "n1", "h1"), "/var/spool/slurmd");
  EXPECT_EQ(SlurmdSpoolDir("SlurmdSpoolDir=/var/spool/slurm/%n.%h/\n", "n1", "h1"),
            "/var/spool/slurm/n1.h1");
  EXPECT_EQ(SlurmScriptPath("/s", "42"), "/s/job00042/slurm_script");
  EXPECT_EQ(SlurmScriptPath("/s", "1234567"), "/s/job1234567/slurm_script");
}

class WriteSlurmScriptTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs::MakeDirs(spool_, 0755).ok()); }
  Status Write(const std::string& spool, const std::string& job, const std::string& path) {
    return WriteSlurmScript(spool, job, path, "#!/bin/bash\necho hi\n", 04755, ::getuid(),
                            ::getgid());
  }
  TempDir tmp_;
  std::string spool_ = tmp_.Sub("spool");
};

// The positive control: slurmd's layout for the dumped job is written, as slurmstepd would.
TEST_F(WriteSlurmScriptTest, WritesAtTheJobsOwnPlace) {
  std::string path = SlurmScriptPath(spool_, "7");
  ASSERT_TRUE(Write(spool_, "7", path).ok());
  EXPECT_EQ(fs::ReadFile(path).value(), "#!/bin/bash\necho hi\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "no setuid bit";
  ASSERT_EQ(::stat((spool_ + "/job00007").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(Write(spool_, "7", path).code(), Code::kAlreadyExists);
}

TEST_F(WriteSlurmScriptTest, AnyOtherPathIsRefused) {
  for (const std::string& path : std::vector<std::string>{
           "/etc/cron.d/job00007/slurm_script", spool_ + "/job00008/slurm_script",
           spool_ + "/job7/slurm_script", spool_ + "/job00007/../x/slurm_script"}) {
    Status s = Write(spool_, "7", path);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << path;
    EXPECT_NE(s.message().find("slurmd keeps job 7's at"), std::string::npos) << s.message();
  }
  EXPECT_EQ(Write(spool_, "", spool_ + "/job/slurm_script").code(), Code::kInvalidArgument);
  EXPECT_FALSE(fs::Exists(spool_ + "/job00008"));
}

// A symlink in the spool dir's path, or as the job dir, would let the script land elsewhere.
TEST_F(WriteSlurmScriptTest, SymlinkedComponentsAreRefused) {
  std::string elsewhere = tmp_.Sub("elsewhere");
  ASSERT_TRUE(fs::MakeDirs(elsewhere, 0755).ok());
  std::string linked_spool = tmp_.Sub("linked");
  ASSERT_EQ(::symlink(elsewhere.c_str(), linked_spool.c_str()), 0);
  Status s = Write(linked_spool, "7", SlurmScriptPath(linked_spool, "7"));
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.ToString();

  ASSERT_EQ(::symlink(elsewhere.c_str(), (spool_ + "/job00009").c_str()), 0);
  s = Write(spool_, "9", SlurmScriptPath(spool_, "9"));
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.ToString();
  EXPECT_FALSE(fs::Exists(elsewhere + "/job00007")) << "written through the symlinked spool dir";
  EXPECT_FALSE(fs::Exists(elsewhere + "/slurm_script")) << "written through the symlinked job dir";
}

}  // namespace
}  // namespace cedana::daemon
