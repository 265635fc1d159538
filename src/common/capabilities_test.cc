#include "common/capabilities.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace cedana {
namespace {

TEST(CapabilitiesTest, NamesTheSeedsCapabilities) {
  EXPECT_EQ(CapabilityNames(kUnprivilegedModeCapabilities),
            "CAP_DAC_READ_SEARCH,CAP_SYS_PTRACE,CAP_CHECKPOINT_RESTORE");
  EXPECT_EQ(CapabilityNames(uint64_t{1} << 21), "cap21");
  EXPECT_EQ(CapabilityNames(0), "");
}

TEST(CapabilitiesTest, SetReadRemoveOnAFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "setting file capabilities needs root";
  char path[] = "/var/tmp/cedana-caps-test.XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto none = FileCapabilities(path);
  ASSERT_TRUE(none.has_value()) << none.error().ToString();
  EXPECT_EQ(*none, 0u);
  Status set = SetFileCapabilities(path, kUnprivilegedModeCapabilities);
  if (!set.ok() && set.error_number() == EOPNOTSUPP) GTEST_SKIP() << "no xattrs on /var/tmp";
  ASSERT_TRUE(set.ok()) << set.ToString();
  auto caps = FileCapabilities(path);
  ASSERT_TRUE(caps.has_value());
  EXPECT_EQ(*caps, kUnprivilegedModeCapabilities);
  // The same as setcap writes it (+eip), when getcap is installed.
  if (::access("/usr/sbin/getcap", X_OK) == 0) {
    std::string cmd = std::string("/usr/sbin/getcap ") + path +
                      " | grep -q 'cap_dac_read_search,cap_sys_ptrace,cap_checkpoint_restore=eip'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  ASSERT_TRUE(RemoveFileCapabilities(path).ok());
  EXPECT_EQ(FileCapabilities(path).value(), 0u);
  EXPECT_TRUE(RemoveFileCapabilities(path).ok()) << "removing none is fine";
  ::unlink(path);
}

}  // namespace
}  // namespace cedana
