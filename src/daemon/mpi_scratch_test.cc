#include "daemon/mpi_scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

namespace cedana::daemon {
namespace {

TEST(MpiScratch, PointsOpenMpiThereUnlessTheJobChoseItself) {
  std::vector<std::string> env = {"PATH=/usr/bin"};
  const std::string dir = MpiScratchDirFor("wl-0a1b2c3d");
  EXPECT_EQ(dir, "/dev/shm/cedana-mpi-wl-0a1b2c3d");
  EXPECT_EQ(AddMpiScratchEnv(&env, dir),
            (std::vector<std::string>{"OMPI_MCA_orte_tmpdir_base",
                                      "OMPI_MCA_btl_vader_backing_directory", "OMPI_MCA_shmem"}));
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "OMPI_MCA_orte_tmpdir_base=" + dir,
                                           "OMPI_MCA_btl_vader_backing_directory=" + dir,
                                           "OMPI_MCA_shmem=^posix"}));
  std::vector<std::string> own = {"OMPI_MCA_btl_vader_backing_directory=/scratch",
                                  "OMPI_MCA_shmem=posix"};
  EXPECT_TRUE(AddMpiScratchEnv(&own, dir).empty()) << "the job's own choices are kept";
  EXPECT_EQ(own.size(), 2u);
  std::vector<std::string> own_dir = {"OMPI_MCA_orte_tmpdir_base=/scratch"};
  EXPECT_EQ(AddMpiScratchEnv(&own_dir, dir), (std::vector<std::string>{"OMPI_MCA_shmem"}));
}

TEST(MpiScratch, OnlyItsOwnDirectoriesComeBackFromACheckpoint) {
  EXPECT_TRUE(IsMpiScratchDir("/dev/shm/cedana-mpi-wl-0a1b2c3d"));
  EXPECT_FALSE(IsMpiScratchDir("/dev/shm/cedana-mpi-wl-"));
  EXPECT_FALSE(IsMpiScratchDir("/dev/shm/cedana-mpi-wl-../../etc"));
  EXPECT_FALSE(IsMpiScratchDir("/etc"));
}

TEST(MpiScratch, MakesItsDirectoryAndRefusesOneSomebodyElsePlaced) {
  char tmpl[] = "/tmp/mpi-scratch-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl, dir = root + "/d";
  ASSERT_TRUE(PrepareMpiScratch(dir, ::getuid(), ::getgid()).ok());
  struct stat st {};
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(PrepareMpiScratch(dir, ::getuid(), ::getgid()).ok());  // a restore on the same node
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  Status open_to_all = PrepareMpiScratch(dir, ::getuid(), ::getgid());
  EXPECT_EQ(open_to_all.code(), Code::kFailedPrecondition);
  EXPECT_NE(open_to_all.message().find("mode 777"), std::string::npos) << open_to_all.ToString();
  const std::string link = root + "/link";
  ASSERT_EQ(::symlink(dir.c_str(), link.c_str()), 0);
  EXPECT_EQ(PrepareMpiScratch(link, ::getuid(), ::getgid()).code(), Code::kFailedPrecondition);
  // Removed only when empty.
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  ASSERT_EQ(::close(::open((dir + "/vader_segment").c_str(), O_CREAT | O_WRONLY, 0600)), 0);
  RemoveMpiScratchIfEmpty(dir);
  EXPECT_TRUE(std::filesystem::exists(dir));
  std::filesystem::remove(dir + "/vader_segment");
  RemoveMpiScratchIfEmpty(dir);
  EXPECT_FALSE(std::filesystem::exists(dir));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace cedana::daemon
