#include "controller/watch/checkpoint_indexer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller/catalog/database.h"
#include "image/manifest.h"
#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::controller {
namespace {

constexpr char kKey[] = "0123456789abcdef0123456789abcdef0123456789abcdef";

class CheckpointIndexerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.checkpoint_dir = tmp_.path();
    auto db = OpenDatabase("sqlite::memory:");
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(Migrate(**db).ok());
    catalog_ = std::make_unique<Catalog>(std::move(db).value());
  }

  // Commits at `at` a manifest that says owner/label/id of `says`, signed with `key` ("" none).
  void Commit(const storage::CheckpointRef& at, const storage::CheckpointRef& says,
              const std::string& key) {
    image::Manifest m;
    m.id = says.id;
    m.label = says.label;
    m.owner = says.owner;
    m.owner_uid = 1000;
    m.owner_gid = 1000;
    m.streams.push_back({});
    m.streams[0].name = "stream-0";
    m.streams[0].digest = std::string(64, 'a');
    if (!key.empty()) image::SignManifest(&m, key);
    ASSERT_TRUE(store_.Commit(at, image::ManifestToJson(m)).ok());
  }

  std::vector<std::string> Indexed() {
    auto list = catalog_->checkpoints().List({});
    EXPECT_TRUE(list.has_value());
    std::vector<std::string> ids;
    for (const auto& c : *list) ids.push_back(c.owner + "/" + c.label + "/" + c.id + ":" + c.state);
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  storage::testing::TempDir tmp_;
  storage::LocalStore store_{tmp_.path()};
  Config config_;
  std::unique_ptr<Catalog> catalog_;
};

// Storage a user can write (unprivileged mode, NFS) must not put entries into anyone's listing:
// only signed manifests at their own path are indexed, with the signed owner, label and id.
TEST_F(CheckpointIndexerTest, IndexesOnlySignedManifestsAtTheirOwnPath) {
  Commit({"alice", "train", "c-good"}, {"alice", "train", "c-good"}, kKey);
  Commit({"alice", "train", "c-unsigned"}, {"alice", "train", "c-unsigned"}, "");
  Commit({"alice", "train", "c-otherkey"}, {"alice", "train", "c-otherkey"},
         "ffffffffffffffffffffffffffffffffffffffffffffffff");
  // alice's signed manifest copied under bob's path: not bob's checkpoint.
  Commit({"bob", "train", "c-moved"}, {"alice", "train", "c-moved"}, kKey);
  // a signed manifest under another id than its own.
  Commit({"alice", "train", "c-renamed"}, {"alice", "train", "c-good"}, kKey);
  CheckpointIndexer indexer(config_, *catalog_, kKey);
  ASSERT_TRUE(indexer.Refresh().ok());
  EXPECT_EQ(Indexed(), std::vector<std::string>{"alice/train/c-good:good"});
  ASSERT_TRUE(indexer.Refresh().ok());  // refused ones stay out without being read again
  EXPECT_EQ(Indexed(), std::vector<std::string>{"alice/train/c-good:good"});
}

TEST_F(CheckpointIndexerTest, WithoutAClusterKeyNothingIsIndexed) {
  Commit({"alice", "train", "c-good"}, {"alice", "train", "c-good"}, kKey);
  CheckpointIndexer indexer(config_, *catalog_, "");
  ASSERT_TRUE(indexer.Refresh().ok());
  EXPECT_TRUE(Indexed().empty());
}

// At 10,000 checkpoints a refresh must not rewrite the index: only new, changed and vanished
// ones are written (a row changed behind the indexer's back stays so until the next full sync).
TEST_F(CheckpointIndexerTest, AfterTheFirstRefreshWritesOnlyWhatChanged) {
  Commit({"alice", "train", "c-1"}, {"alice", "train", "c-1"}, kKey);
  Commit({"alice", "train", "c-2"}, {"alice", "train", "c-2"}, kKey);
  CheckpointIndexer indexer(config_, *catalog_, kKey);
  ASSERT_TRUE(indexer.Refresh().ok());
  EXPECT_EQ(Indexed(), (std::vector<std::string>{"alice/train/c-1:good", "alice/train/c-2:good"}));
  ASSERT_TRUE(catalog_->checkpoints().Delete("c-1").ok());  // not the indexer's doing
  Commit({"alice", "train", "c-3"}, {"alice", "train", "c-3"}, kKey);
  ASSERT_TRUE(store_.Delete({"alice", "train", "c-2"}).ok());
  ASSERT_TRUE(indexer.Refresh().ok());
  EXPECT_EQ(Indexed(), std::vector<std::string>{"alice/train/c-3:good"});
}

TEST(DatabaseTest, TransactionCommitsAllOrNothing) {
  auto db = OpenDatabase("sqlite::memory:");
  ASSERT_TRUE(db.has_value());
  Database& d = **db;
  ASSERT_TRUE(d.Exec("CREATE TABLE t (x INTEGER)").ok());
  Status failed = d.Transaction([&]() -> Status {
    CEDANA_RETURN_IF_ERROR(d.Exec("INSERT INTO t (x) VALUES (1)"));
    return UnavailableError("the second write failed");
  });
  EXPECT_EQ(failed.code(), Code::kUnavailable);
  EXPECT_TRUE(d.Transaction([&] { return d.Exec("INSERT INTO t (x) VALUES (2)"); }).ok());
  auto rows = d.Query("SELECT x FROM t");
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->at(0).Int(0), 2);
}

}  // namespace
}  // namespace cedana::controller
