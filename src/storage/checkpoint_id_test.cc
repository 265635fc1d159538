#include "storage/checkpoint_id.h"

#include <gtest/gtest.h>

namespace cedana::storage {
namespace {

using std::chrono::system_clock;

TEST(CheckpointIdTest, StampAndTimeRoundTrip) {
  const auto when = system_clock::from_time_t(1796140675);  // 2026-12-01 15:57:55 UTC
  EXPECT_EQ(CheckpointIdStamp(when), "20261201-155755-");
  auto back = CheckpointIdTime(CheckpointIdStamp(when) + "c27ab72a");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, when);
}

TEST(CheckpointIdTest, IdsWithoutAStampHaveNoTime) {
  for (const char* id : {"", "c-1", "20261201-155755", "2026120a-155755-x", "20261201_155755-x",
                         "20261301-155755-x", "20261200-155755-x", "20261201-245755-x"}) {
    EXPECT_FALSE(CheckpointIdTime(id).has_value()) << id;
  }
}

}  // namespace
}  // namespace cedana::storage
