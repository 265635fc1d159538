#include "check/check_report.h"

#include <gtest/gtest.h>

namespace cedana::check {
namespace {

CheckReport Sample(Verdict store) {
  return {{{"criu", Verdict::kOk, "4.1.1 at /usr/local/bin/criu", ""},
           {"network lock", Verdict::kWarn, "the nft command is missing", "apt install nftables"},
           {"checkpoint dir", store, "/ckpt: read-only file system", "mount it read-write"},
           {"slurm", Verdict::kSkipped, "SLURM is not installed on this node", ""}}};
}

TEST(CheckReport, OnlyAFailureMeansCheckpointsCannotWork) {
  EXPECT_TRUE(Sample(Verdict::kOk).CanCheckpoint());
  EXPECT_TRUE(Sample(Verdict::kWarn).CanCheckpoint());
  EXPECT_TRUE(Sample(Verdict::kSkipped).CanCheckpoint());
  EXPECT_FALSE(Sample(Verdict::kFail).CanCheckpoint());
  EXPECT_TRUE(CheckReport{}.CanCheckpoint());
}

TEST(CheckReport, TextHasALinePerFindingItsFixAndTheSummary) {
  std::string text = RenderText(Sample(Verdict::kFail));
  EXPECT_NE(text.find("ok    criu            4.1.1 at /usr/local/bin/criu\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("FAIL  checkpoint dir  /ckpt: read-only file system\n"
                      "                      fix: mount it read-write\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("skip  slurm           SLURM is not installed on this node\n"),
            std::string::npos);
  EXPECT_EQ(text.find("fix: \n"), std::string::npos) << "an empty fix has no line";
  EXPECT_NE(text.find("cannot work on this node: 1 check failed"), std::string::npos);
  EXPECT_NE(RenderText(Sample(Verdict::kOk)).find("can work on this node (1 warning)"),
            std::string::npos);
}

TEST(CheckReport, JsonNamesEveryFindingAndTheOutcome) {
  nlohmann::json json = ToJson(Sample(Verdict::kFail));
  EXPECT_EQ(json["can_checkpoint"], false);
  ASSERT_EQ(json["findings"].size(), 4u);
  EXPECT_EQ(json["findings"][2]["name"], "checkpoint dir");
  EXPECT_EQ(json["findings"][2]["verdict"], "fail");
  EXPECT_EQ(json["findings"][1]["fix"], "apt install nftables");
  EXPECT_EQ(ToJson(Sample(Verdict::kOk))["can_checkpoint"], true);
}

}  // namespace
}  // namespace cedana::check
