#include "slurm/plugin_file_version.h"

#include <gtest/gtest.h>

namespace cedana::slurm {
namespace {

TEST(PluginFileVersion, SpellsVersionsAsSlurmDoes) {
  EXPECT_EQ(SlurmVersionString(0x160508), "22.05.8");
  EXPECT_EQ(SlurmVersionString(0x190b00), "25.11.0");
}

TEST(PluginFileVersion, ReadsTheExportedPluginVersion) {
  auto v = PluginFileSlurmVersion(CEDANA_FAKE_PLUGIN_241105);
  ASSERT_TRUE(v.has_value()) << v.error().ToString();
  EXPECT_EQ(*v, "24.11.5");
}

TEST(PluginFileVersion, NoPluginVersionIsNotFound) {
  auto v = PluginFileSlurmVersion(CEDANA_FAKE_PLUGIN_UNVERSIONED);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code(), Code::kNotFound);
}

TEST(PluginFileVersion, OtherFilesAreRefused) {
  auto text = PluginFileSlurmVersion(CEDANA_FAKE_PLUGIN_SOURCE);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code(), Code::kInvalidArgument);
  auto missing = PluginFileSlurmVersion("/nonexistent/task_cedana.so");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
}

}  // namespace
}  // namespace cedana::slurm
