#include "daemon/abandoned_checkpoints.h"

#include <gtest/gtest.h>

#include "storage/checkpoint_id.h"

namespace cedana::daemon {
namespace {

using std::chrono::system_clock;

storage::CheckpointRef Begun(system_clock::time_point when) {
  return {"alice", "train", storage::CheckpointIdStamp(when) + "0123abcd"};
}

TEST(AbandonedCheckpointsTest, OnlyThoseBegunLongerAgoThanAnyDumpLasts) {
  const auto now = system_clock::from_time_t(1796140675);
  const auto old = Begun(now - kAbandonedAfter - std::chrono::minutes(1));
  const auto young =
      Begun(now - kAbandonedAfter + std::chrono::minutes(1));  // maybe still being written
  const storage::CheckpointRef foreign{"alice", "train", "not-a-cedana-id"};
  auto abandoned = Abandoned({old, young, foreign}, now);
  ASSERT_EQ(abandoned.size(), 1u);
  EXPECT_EQ(abandoned[0].Path(), old.Path());
}

}  // namespace
}  // namespace cedana::daemon
