#include "image/checkpoint_listing.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using storage::CheckpointRef;
using storage::LocalStore;
using storage::testing::TempDir;

class CatalogTest : public ::testing::Test {
 protected:
  void Commit(const std::string& owner, const std::string& label, const std::string& id,
              int64_t created_at_ms) {
    Manifest m;
    m.id = id;
    m.owner = owner;
    m.label = label;
    m.created_at_ms = created_at_ms;
    m.streams = {{"stream-0", 1024, 1024, std::string(64, '0'), {}}};
    CheckpointRef ref{owner, label, id};
    auto sink = store_.CreateStream(ref, 0);
    ASSERT_TRUE(sink.has_value());
    ASSERT_TRUE((*sink)->Close().ok());
    ASSERT_TRUE(store_.Commit(ref, ManifestToJson(m)).ok());
  }

  std::vector<std::string> ListIds(const std::optional<std::string>& owner,
                                   const std::optional<std::string>& label) {
    auto manifests = ListManifests(store_, owner, label);
    EXPECT_TRUE(manifests.has_value()) << manifests.error().ToString();
    std::vector<std::string> ids;
    for (const auto& m : *manifests) ids.push_back(m.id);
    return ids;
  }

  TempDir tmp_;
  LocalStore store_{tmp_.path()};
};

using Ids = std::vector<std::string>;

TEST_F(CatalogTest, ListsNewestFirst) {
  Commit("alice", "train", "c-2", 2000);
  Commit("alice", "train", "c-1", 1000);
  Commit("alice", "train", "c-3b", 3000);
  Commit("alice", "train", "c-3a", 3000);  // same time: id breaks the tie
  Commit("alice", "eval", "e-1", 5000);
  Commit("bob", "train", "b-1", 4000);
  EXPECT_EQ(ListIds("alice", "train"), (Ids{"c-3b", "c-3a", "c-2", "c-1"}));
  EXPECT_EQ(ListIds("alice", std::nullopt), (Ids{"e-1", "c-3b", "c-3a", "c-2", "c-1"}));
  EXPECT_EQ(ListIds(std::nullopt, "train"), (Ids{"b-1", "c-3b", "c-3a", "c-2", "c-1"}));
  EXPECT_EQ(ListIds("carol", std::nullopt), Ids{});
}

TEST_F(CatalogTest, SkipsUncommittedAndUnreadable) {
  Commit("alice", "train", "c-1", 1000);
  auto sink = store_.CreateStream({"alice", "train", "c-2"}, 0);  // dump in progress
  ASSERT_TRUE(sink.has_value());
  ASSERT_TRUE(store_.Commit({"alice", "train", "c-3"}, "{not json").ok());
  ASSERT_TRUE(store_.Commit({"alice", "train", "c-4"}, "{\"format_version\": 99}").ok());
  EXPECT_EQ(ListIds("alice", "train"), Ids{"c-1"});
}

TEST_F(CatalogTest, FindById) {
  Commit("alice", "train", "c-1", 1000);
  Commit("bob", "eval", "c-2", 2000);
  auto found = FindById(store_, "c-2");
  ASSERT_TRUE(found.has_value()) << found.error().ToString();
  EXPECT_EQ(found->first.Path(), "bob/eval/c-2");
  EXPECT_EQ(found->second.created_at_ms, 2000);

  auto missing = FindById(store_, "c-9");
  ASSERT_EQ(missing.error().code(), Code::kNotFound);
  EXPECT_EQ(missing.error().message(), "checkpoint c-9 not found in " + tmp_.path());
}

TEST_F(CatalogTest, FindByIdSaysWhyACheckpointCannotBeUsed) {
  Commit("alice", "train", "c-1", 1000);
  Commit("alice", "train", "c-2", 2000);
  std::string dir = tmp_.path() + "/alice/train/";
  ASSERT_EQ(::unlink((dir + "c-2/manifest.json").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "c-1/manifest.json").c_str(), (dir + "c-2/manifest.json").c_str()), 0);
  auto linked = FindById(store_, "c-2");
  ASSERT_FALSE(linked.has_value()) << "a manifest reached through a symlink was used";
  EXPECT_NE(linked.error().message().find("c-2/manifest.json is reached through a symlink"),
            std::string::npos)
      << linked.error().ToString();
  ASSERT_TRUE(store_.Commit({"alice", "train", "c-3"}, "{not json").ok());
  auto unreadable = FindById(store_, "c-3");
  ASSERT_FALSE(unreadable.has_value());
  EXPECT_NE(unreadable.error().message().find("alice/train/c-3"), std::string::npos)
      << unreadable.error().ToString();
  EXPECT_EQ(ListIds("alice", "train"), Ids{"c-1"});
}

TEST_F(CatalogTest, RetentionKeepsNewest) {
  for (int i = 1; i <= 5; ++i) Commit("alice", "train", "c-" + std::to_string(i), i * 1000);
  Commit("alice", "eval", "e-1", 1);
  ASSERT_TRUE(ApplyRetention(store_, "alice", "train", 2).ok());
  EXPECT_EQ(ListIds("alice", "train"), (Ids{"c-5", "c-4"}));
  EXPECT_FALSE(fs::Exists(tmp_.path() + "/alice/train/c-3"));
  EXPECT_EQ(ListIds("alice", "eval"), Ids{"e-1"}) << "other labels untouched";
}

TEST_F(CatalogTest, RetentionKeepAllAndMoreThanPresent) {
  for (int i = 1; i <= 3; ++i) Commit("alice", "train", "c-" + std::to_string(i), i);
  for (int keep : {0, -1, 3, 10}) {
    ASSERT_TRUE(ApplyRetention(store_, "alice", "train", keep).ok());
    EXPECT_EQ(ListIds("alice", "train").size(), 3u) << "keep " << keep;
  }
  ASSERT_TRUE(ApplyRetention(store_, "alice", "train", 1).ok());
  EXPECT_EQ(ListIds("alice", "train"), Ids{"c-3"});
}

}  // namespace
}  // namespace cedana::image
