#include "controller/policy/checkpoint_deletion.h"

#include <gtest/gtest.h>

#include "storage/checkpoint_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::controller {
namespace {

class CheckpointDeletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = OpenDatabase("sqlite::memory:");
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(Migrate(**db).ok());
    catalog_ = std::make_unique<Catalog>(std::move(db).value());
    auto store = storage::OpenStore(dir_.path(), S3Config{}, storage::kNoStreamMemory);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    store_ = std::move(store).value();
  }

  // A committed checkpoint in the store and in the index.
  CheckpointRecord Stored(const std::string& id, int64_t created_ms,
                          std::optional<int64_t> policy_id) {
    CheckpointRecord c;
    c.id = id;
    c.owner = "alice";
    c.label = "train";
    c.created_ms = created_ms;
    c.state = "good";
    c.policy_id = policy_id;
    EXPECT_TRUE(store_->Commit({c.owner, c.label, c.id}, "{}").ok());
    EXPECT_TRUE(catalog_->checkpoints().Upsert(c).ok());
    return c;
  }

  bool InStore(const CheckpointRecord& c) {
    return store_->ReadManifest({c.owner, c.label, c.id}).has_value();
  }
  bool Indexed(const CheckpointRecord& c) { return catalog_->checkpoints().Get(c.id).has_value(); }

  storage::testing::TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<storage::CheckpointStore> store_;
};

TEST_F(CheckpointDeletionTest, DeletesFromTheStorageThenTheIndex) {
  CheckpointRecord c = Stored("20261203-100000-aaaaaaaa", 1000, std::nullopt);
  ASSERT_TRUE(DeleteCheckpoint(dir_.path(), S3Config{}, catalog_->checkpoints(), c).ok());
  EXPECT_FALSE(InStore(c));
  EXPECT_FALSE(Indexed(c));
}

// The storage is the truth: what it refuses to delete stays in the index.
TEST_F(CheckpointDeletionTest, WhatTheStorageRefusesStaysIndexed) {
  CheckpointRecord c = Stored("20261203-100000-bbbbbbbb", 1000, std::nullopt);
  CheckpointRecord bad = c;
  bad.label = "../elsewhere";  // a ref the store refuses
  ASSERT_TRUE(catalog_->checkpoints().Upsert(bad).ok());
  Status s = DeleteCheckpoint(dir_.path(), S3Config{}, catalog_->checkpoints(), bad);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Indexed(bad));
}

TEST_F(CheckpointDeletionTest, RetentionKeepsTheNewestOfThePolicyOnly) {
  CheckpointRecord oldest = Stored("20261203-100000-00000001", 1000, 3);
  CheckpointRecord manual = Stored("20261203-100000-00000002", 2000, std::nullopt);
  CheckpointRecord older = Stored("20261203-100000-00000003", 3000, 3);
  CheckpointRecord newest = Stored("20261203-100000-00000004", 4000, 3);
  PolicyRecord p;
  p.id = 3;
  p.name = "hourly";
  p.max_checkpoints = 1;
  ASSERT_TRUE(ApplyPolicyRetention(dir_.path(), S3Config{}, *catalog_, p, newest).ok());
  for (const CheckpointRecord& gone : {oldest, older}) {
    EXPECT_FALSE(InStore(gone)) << gone.id;
    EXPECT_FALSE(Indexed(gone)) << gone.id;
  }
  for (const CheckpointRecord& kept : {manual, newest}) {
    EXPECT_TRUE(InStore(kept)) << kept.id;
    EXPECT_TRUE(Indexed(kept)) << kept.id;
  }
}

}  // namespace
}  // namespace cedana::controller
