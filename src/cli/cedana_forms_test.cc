#include "cli/cedana_forms.h"

#include <gtest/gtest.h>

namespace cedana::cli {
namespace {

using Args = std::vector<std::string>;

Args Ours(const Args& cedanas) {
  Args argv = {"cedana"};
  argv.insert(argv.end(), cedanas.begin(), cedanas.end());
  Result<TranslatedCommand> t = TranslateCedanaForms(argv);
  if (!t.has_value()) return {"error: " + t.error().message()};
  return Args(t->argv.begin() + 1, t->argv.end());
}

TEST(CedanaFormsTest, EachFormBecomesOurs) {
  EXPECT_EQ(Ours({"dump", "process", "4242", "--leave-running"}),
            (Args{"dump", "--pid", "4242", "--leave-running"}));
  EXPECT_EQ(Ours({"dump", "slurm", "--jid", "81"}), (Args{"dump", "slurm", "81"}));
  EXPECT_EQ(Ours({"dump", "slurm", "--jid=81", "--stop"}), (Args{"dump", "slurm", "81", "--stop"}));
  EXPECT_EQ(Ours({"run", "process", "sleep", "100"}), (Args{"run", "--", "sleep", "100"}));
  EXPECT_EQ(Ours({"run", "process", "--label", "x", "-a", "bash", "-c", "true"}),
            (Args{"run", "--label", "x", "-a", "--", "bash", "-c", "true"}));
  EXPECT_EQ(Ours({"run", "process", "--", "ls", "-l"}), (Args{"run", "--", "ls", "-l"}));
  EXPECT_EQ(Ours({"restore", "process", "--path", "/ckpt/alice/job-7/20261202-160745-0f631db0/"}),
            (Args{"restore", "--dir", "/ckpt", "20261202-160745-0f631db0"}));
  EXPECT_EQ(Ours({"restore", "process", "--path=/ckpt/alice/job-7/ID", "--attach"}),
            (Args{"restore", "--dir", "/ckpt", "ID", "--attach"}));
  EXPECT_EQ(Ours({"restore", "process", "--path", "s3://bucket/pre/alice/job-7/ID"}),
            (Args{"restore", "--dir", "s3://bucket/pre", "ID"}));
  EXPECT_EQ(Ours({"job", "list"}), (Args{"ps"}));
  EXPECT_EQ(Ours({"job", "inspect", "wl-1"}), (Args{"ps", "--json", "wl-1"}));
  EXPECT_EQ(Ours({"job", "kill", "wl-1"}), (Args{"kill", "wl-1"}));
  EXPECT_EQ(Ours({"checkpoint", "list", "--label", "x"}), (Args{"checkpoints", "--label", "x"}));
  EXPECT_EQ(Ours({"checkpoint", "inspect", "ID"}), (Args{"checkpoints", "--json", "--id", "ID"}));
  // Ours stay ours.
  EXPECT_EQ(Ours({"dump", "wl-1", "--pid", "3"}), (Args{"dump", "wl-1", "--pid", "3"}));
  EXPECT_EQ(Ours({"run", "--", "process"}), (Args{"run", "--", "process"}));
}

TEST(CedanaFormsTest, ConfigFlagsAreTakenOutButVersionKeepsItsOwn) {
  Result<TranslatedCommand> t = TranslateCedanaForms({"cedana", "ps", "--merge-config"});
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->merge_config);
  EXPECT_FALSE(t->init_config);
  EXPECT_EQ(t->argv, (Args{"cedana", "ps"}));
  t = TranslateCedanaForms({"cedana", "version", "--init-config"});
  ASSERT_TRUE(t.has_value());
  EXPECT_FALSE(t->init_config);
  EXPECT_EQ(t->argv, (Args{"cedana", "version", "--init-config"}));
  // A workload's own arguments are its own.
  t = TranslateCedanaForms({"cedana", "run", "--", "tool", "--init-config"});
  ASSERT_TRUE(t.has_value());
  EXPECT_FALSE(t->init_config);
  EXPECT_EQ(t->argv.back(), "--init-config");
}

TEST(CedanaFormsTest, WrongFormsSayWhatIsExpected) {
  EXPECT_EQ(Ours({"dump", "process"}), Args{"error: usage: cedana dump process PID"});
  EXPECT_NE(Ours({"restore", "process"})[0].find("a checkpoint's directory"), std::string::npos);
  EXPECT_NE(Ours({"restore", "process", "--path", "relative/a/b/c"})[0].find("usage"),
            std::string::npos);
  EXPECT_NE(Ours({"restore", "process", "--path", "/a/b"})[0].find("usage"), std::string::npos);
  EXPECT_NE(Ours({"restore", "process", "--path", "s3://a/b/c"})[0].find("usage"),
            std::string::npos);
  EXPECT_NE(Ours({"restore", "process", "--path", "/x/../a/b/c"})[0].find("usage"),
            std::string::npos);
  EXPECT_NE(Ours({"job", "stop"})[0].find("usage: cedana job"), std::string::npos);
  EXPECT_NE(Ours({"checkpoint", "inspect"})[0].find("usage: cedana checkpoint"), std::string::npos);
}

}  // namespace
}  // namespace cedana::cli
