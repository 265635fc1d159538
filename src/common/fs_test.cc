#include "common/fs.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace cedana::fs {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

class MakeDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/cedana-fs-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(MakeDirsTest, AnExistingDirectoryKeepsItsMode) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
  ASSERT_TRUE(MakeDirs(dir_, 0755).ok());
  EXPECT_EQ(ModeOf(dir_), 0555u) << "an admin's (or a user's read-only) dir was made writable";
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
}

TEST_F(MakeDirsTest, CreatedDirectoriesGetTheModeWhateverTheUmask) {
  mode_t old = ::umask(077);
  Status s = MakeDirs(dir_ + "/a/b/c", 0711);
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ModeOf(dir_ + "/a"), 0711u);
  EXPECT_EQ(ModeOf(dir_ + "/a/b/c"), 0711u);
}

TEST_F(MakeDirsTest, AFileInTheWayIsAnError) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/file", "x").ok());
  EXPECT_FALSE(MakeDirs(dir_ + "/file").ok());
  EXPECT_FALSE(MakeDirs(dir_ + "/file/sub").ok());
}

// Whether it waits for the disk or not, a write replaces the file whole and leaves nothing
// beside it.
TEST_F(MakeDirsTest, EitherDurabilityReplacesTheFileWhole) {
  for (Durability d : {Durability::kOnDisk, Durability::kUntilCrash}) {
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/record", "old", 0600, d).ok());
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/record", "new", 0600, d).ok());
    Result<std::string> got = ReadFile(dir_ + "/record");
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    EXPECT_EQ(*got, "new");
    EXPECT_EQ(ModeOf(dir_ + "/record"), 0600u);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1)
        << "a temporary file stayed";
    std::filesystem::remove(dir_ + "/record");
  }
}

}  // namespace
}  // namespace cedana::fs
