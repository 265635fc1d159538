#include "common/checkpoint_reason.h"

#include <gtest/gtest.h>

namespace cedana {
namespace {

TEST(CheckpointReasonTest, EveryListedReasonIsValid) {
  for (std::string_view r : kCheckpointReasons) EXPECT_TRUE(ValidateCheckpointReason(r).ok()) << r;
}

TEST(CheckpointReasonTest, AnUnknownReasonNamesTheValidOnes) {
  Status s = ValidateCheckpointReason("because");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "unknown checkpoint reason \"because\" (valid: preemption, scancel, requeue, time_limit, "
      "policy, maintenance, manual, termination)");
  EXPECT_FALSE(ValidateCheckpointReason("").ok());
}

TEST(CheckpointReasonTest, PhraseForASentence) {
  EXPECT_EQ(ReasonPhrase("time_limit"), "time limit");
  EXPECT_EQ(ReasonPhrase("preemption"), "preemption");
}

}  // namespace
}  // namespace cedana
