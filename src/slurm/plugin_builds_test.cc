#include "slurm/plugin_builds.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::slurm {
namespace {

class PluginBuildsTest : public testing::Test {
 protected:
  void Build(const std::string& version, std::vector<std::string> files = {"a.so", "b.so"}) {
    ASSERT_TRUE(fs::MakeDirs(store_ + "/" + version).ok());
    for (const auto& f : files)
      ASSERT_TRUE(fs::WriteFileAtomic(store_ + "/" + version + "/" + f, "x").ok());
  }
  storage::testing::TempDir dir_;
  const std::string store_ = dir_.path();
  const std::vector<std::string> required_ = {"a.so", "b.so"};
};

TEST(SlurmVersion, Parses) {
  EXPECT_EQ(ParseSlurmVersion("22.05.8"), (std::vector<int>{22, 5, 8}));
  EXPECT_EQ(ParseSlurmVersion("25.11.0"), (std::vector<int>{25, 11, 0}));
  for (const char* bad : {"", "22.05", "22.05.8.1", "22..8", "22.05.x", "v22.05.8", "22.05.8."})
    EXPECT_FALSE(ParseSlurmVersion(bad).has_value()) << bad;
}

TEST_F(PluginBuildsTest, ListsCompleteBuildsOldestFirst) {
  Build("24.11.5");
  Build("22.05.8");
  Build("25.11.0");
  Build("23.02.1", {"a.so"});  // incomplete
  ASSERT_TRUE(fs::MakeDirs(store_ + "/notes").ok());
  EXPECT_EQ(PluginBuilds(store_, required_),
            (std::vector<std::string>{"22.05.8", "24.11.5", "25.11.0"}));
  EXPECT_TRUE(PluginBuilds(store_ + "/missing", required_).empty());
}

TEST_F(PluginBuildsTest, ChoosesTheNodesVersion) {
  Build("22.05.8");
  Build("24.11.5");
  auto chosen = ChoosePluginBuild(store_, required_, std::string("24.11.5"));
  ASSERT_TRUE(chosen.has_value()) << chosen.error().ToString();
  EXPECT_EQ(*chosen, store_ + "/24.11.5");
}

TEST_F(PluginBuildsTest, RefusesAVersionWithoutABuildListingTheBuilds) {
  Build("22.05.8");
  Build("24.11.5");
  auto chosen = ChoosePluginBuild(store_, required_, std::string("25.05.3"));
  ASSERT_FALSE(chosen.has_value());
  EXPECT_EQ(chosen.error().code(), Code::kNotFound);
  EXPECT_NE(chosen.error().message().find("no build for SLURM 25.05.3"), std::string::npos);
  EXPECT_NE(chosen.error().message().find("(builds: 22.05.8, 24.11.5)"), std::string::npos)
      << chosen.error().message();
}

TEST_F(PluginBuildsTest, WithoutSlurmTakesTheOnlyBuildOrAsks) {
  auto none = ChoosePluginBuild(store_, required_, std::nullopt);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code(), Code::kNotFound);
  Build("22.05.8");
  auto only = ChoosePluginBuild(store_, required_, std::nullopt);
  ASSERT_TRUE(only.has_value());
  EXPECT_EQ(*only, store_ + "/22.05.8");
  Build("24.11.5");
  auto two = ChoosePluginBuild(store_, required_, std::nullopt);
  ASSERT_FALSE(two.has_value());
  EXPECT_EQ(two.error().code(), Code::kFailedPrecondition);
  EXPECT_NE(two.error().message().find("--slurm-version"), std::string::npos);
}

}  // namespace
}  // namespace cedana::slurm
