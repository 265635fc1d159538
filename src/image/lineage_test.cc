#include "image/lineage.h"

#include <gtest/gtest.h>

#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

LineageEnd End() {
  LineageEnd end;
  end.owner = "alice";
  end.label = "train";
  end.finished_at_ms = 1764590400000;  // 2025-12-01 12:00:00 UTC
  end.exit_code = 3;
  end.workload_id = "wl-1";
  end.job_id = "17";
  end.node = "compute-01";
  return end;
}

TEST(LineageTest, RoundTripsThroughTheStore) {
  storage::testing::TempDir tmp;
  storage::LocalStore store(tmp.path());
  auto none = ReadLineageEnd(store, "alice", "train");
  ASSERT_TRUE(none.has_value()) << none.error().ToString();
  EXPECT_FALSE(none->has_value()) << "a label without a record has an open lineage";
  ASSERT_TRUE(WriteLineageEnd(store, End()).ok());
  auto read = ReadLineageEnd(store, "alice", "train");
  ASSERT_TRUE(read.has_value() && read->has_value());
  EXPECT_EQ((*read)->finished_at_ms, End().finished_at_ms);
  EXPECT_EQ((*read)->exit_code, 3);
  EXPECT_EQ((*read)->job_id, "17");
  auto listed = store.List(std::nullopt, std::nullopt);
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->empty()) << "the record is not a checkpoint";
}

TEST(LineageTest, ARecordMustBeItsLabels) {
  storage::testing::TempDir tmp;
  storage::LocalStore store(tmp.path());
  LineageEnd other = End();
  other.label = "eval";
  ASSERT_TRUE(store.WriteLineage("alice", "train", LineageEndToJson(other)).ok());
  auto read = ReadLineageEnd(store, "alice", "train");
  ASSERT_FALSE(read.has_value());
  EXPECT_NE(read.error().message().find("names alice/eval"), std::string::npos)
      << read.error().ToString();
  ASSERT_TRUE(
      store.WriteLineage("alice", "train", "{\"owner\": \"alice\", \"label\": \"train\"}").ok());
  read = ReadLineageEnd(store, "alice", "train");
  ASSERT_FALSE(read.has_value());
  EXPECT_NE(read.error().message().find("finished_at_ms"), std::string::npos)
      << read.error().ToString();
}

TEST(LineageTest, CheckpointsUpToTheEndBelongToTheFinishedRun) {
  const int64_t end = End().finished_at_ms;
  EXPECT_TRUE(OfFinishedRun(end - 1, End()));
  EXPECT_TRUE(OfFinishedRun(end, End()));
  EXPECT_FALSE(OfFinishedRun(end + 1, End())) << "made by a new run";
  EXPECT_FALSE(OfFinishedRun(end - 1, std::nullopt)) << "an open lineage";
}

TEST(LineageTest, DescribesTheEnd) {
  EXPECT_EQ(DescribeEnd(End()),
            "label train: its last run finished at 2025-12-01 12:00:00 UTC (exit 3)");
  Status fresh = FinishedRunError(End());
  EXPECT_EQ(fresh.code(), Code::kNotFound);
  EXPECT_TRUE(IsFinishedRun(fresh));
  EXPECT_TRUE(IsFinishedRun(fresh.WithContext("restore"))) << "context in front keeps its meaning";
  EXPECT_FALSE(IsFinishedRun(NotFoundError("no checkpoint of label train in /c")));
  EXPECT_FALSE(IsFinishedRun(InternalError(fresh.message())));
}

}  // namespace
}  // namespace cedana::image
