#include "daemon/workload.h"

#include <gtest/gtest.h>

#include "common/fs.h"

namespace cedana::daemon {
namespace {

TEST(WorkloadTest, LabelValidation) {
  for (std::string ok : std::vector<std::string>{"victim", "a", "job_1.2-x", std::string(128, 'a')})
    EXPECT_TRUE(ValidateLabel(ok).ok()) << ok;
  for (std::string bad : std::vector<std::string>{"", ".hidden", "-x", "a/b", "a b", "x;y",
                                                  std::string(129, 'a'), "..", "é"}) {
    Status s = ValidateLabel(bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("letters, digits"), std::string::npos);
  }
}

TEST(WorkloadTest, RecordsRoundTrip) {
  std::string dir = ::testing::TempDir() + "/records-" + NewId("");
  WorkloadRecords records(dir);
  WorkloadSpec spec;
  spec.id = NewId("wl-");
  spec.label = "counting";
  spec.argv = {"bash", "-c", "echo hi"};
  spec.uid = 1000;
  spec.created_at_ms = NowMs();
  ASSERT_TRUE(records.Create(spec).ok());
  auto loaded = records.LoadSpec(spec.id);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->argv, spec.argv);
  EXPECT_EQ(loaded->uid, 1000u);
  EXPECT_EQ(loaded->mode, WorkloadMode::kRun);

  WorkloadState state;
  state.status = WorkloadStatus::kRunning;
  state.pid = 1234;
  state.stdout_ino = 99;
  ASSERT_TRUE(records.SaveState(spec.id, state).ok());
  auto st = records.LoadState(spec.id);
  EXPECT_EQ(st->status, WorkloadStatus::kRunning);
  EXPECT_EQ(st->stdout_ino, 99u);
  EXPECT_FALSE(records.LoadEnd(spec.id).has_value());
  ASSERT_TRUE(records.SaveEnd(spec.id, {"ckpt-1"}).ok());
  EXPECT_EQ(records.LoadEnd(spec.id)->checkpoint_id, "ckpt-1");
  EXPECT_FALSE(records.LoadNotice(spec.id).has_value());
  ASSERT_TRUE(records.SaveNotice(spec.id, {"checkpoint on preemption failed: disk full", 42}).ok());
  EXPECT_EQ(records.LoadNotice(spec.id)->text, "checkpoint on preemption failed: disk full");
  EXPECT_EQ(records.LoadNotice(spec.id)->at_ms, 42);
  ASSERT_TRUE(fs::WriteFileAtomic(records.DirOf(spec.id) + "/notice.json", "[1]", 0644).ok());
  EXPECT_FALSE(records.LoadNotice(spec.id).has_value());  // not one of ours: ignored, never thrown
  EXPECT_EQ(records.List().value(), std::vector<std::string>{spec.id});
  EXPECT_EQ(records.LoadSpec("wl-missing").error().code(), Code::kNotFound);
  EXPECT_EQ(records.LoadSpec("../etc").error().code(), Code::kNotFound);
  ASSERT_TRUE(records.Remove(spec.id).ok());
  EXPECT_TRUE(records.List()->empty());
  (void)fs::RemoveTree(dir);
}

// The mode is a word in spec.json and an enum inside; a word that is no mode is refused, naming
// the valid ones, and a record written before the direct-restore rename still reads.
TEST(WorkloadTest, SpecModesAndFormerKeys) {
  WorkloadSpec spec;
  spec.id = "wl-1";
  spec.mode = WorkloadMode::kRestore;
  nlohmann::json j = SpecToJson(spec);
  EXPECT_EQ(j["mode"], "restore");
  EXPECT_EQ(SpecFromJson(j)->mode, WorkloadMode::kRestore);

  j["mode"] = "resume";
  Result<WorkloadSpec> bad = SpecFromJson(j);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("mode \"resume\" is none of run, restore"),
            std::string::npos)
      << bad.error().message();

  j["mode"] = "restore";
  j.erase("direct_restore");
  j["streamed_restore"] = true;
  EXPECT_TRUE(SpecFromJson(j)->direct_restore);
}

}  // namespace
}  // namespace cedana::daemon
