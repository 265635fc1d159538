#include "common/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "common/fs.h"

namespace cedana {
namespace {

std::string WriteTemp(const std::string& text) {
  std::string path = ::testing::TempDir() + "/config_test.json";
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTest, DefaultsWhenNoFile) {
  auto c = LoadConfig("/nonexistent/config.json", {});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->config.checkpoint_streams, 1);
  EXPECT_EQ(c->config.socket_path, "/run/cedana/cedana.sock");
  for (const auto& s : c->sources) EXPECT_EQ(s.origin, "default") << s.key;
}

TEST(ConfigTest, PrecedenceFileEnvFlag) {
  std::string path = WriteTemp(R"({"checkpoint": {"streams": 2, "compression": "gzip", "dir": "/a"}})");
  auto c = LoadConfig(path, {{"CEDANA_CHECKPOINT_STREAMS", "4"}}, {{"checkpoint.dir", "/b"}});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->config.checkpoint_streams, 4);
  EXPECT_EQ(c->config.checkpoint_compression, "gzip");
  EXPECT_EQ(c->config.checkpoint_dir, "/b");
  for (const auto& s : c->sources) {
    if (s.key == "checkpoint.streams") EXPECT_EQ(s.origin, "env CEDANA_CHECKPOINT_STREAMS");
    if (s.key == "checkpoint.compression") EXPECT_EQ(s.origin, "file " + path);
    if (s.key == "checkpoint.dir") EXPECT_EQ(s.origin, "flag");
  }
}

TEST(ConfigTest, BadValuesNameKeyAndValidValues) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string expect;  // substring of the message
  } cases[] = {
      {{{"CEDANA_CHECKPOINT_COMPRESSION", "bzip2"}}, "checkpoint.compression: invalid value \"bzip2\" (valid: none, gzip, lz4, zstd)"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "0"}}, "checkpoint.streams: invalid value \"0\" (valid: an integer from 1 to 64)"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "1000"}}, "an integer from 1 to 64"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "4x"}}, "invalid value \"4x\""},
      {{{"CEDANA_CHECKPOINT_DIR", "relative/dir"}}, "an absolute path or s3://bucket[/prefix]"},
      {{{"CEDANA_SLURM_UNPRIVILEGED", "yes"}}, "slurm.unprivileged: invalid value \"yes\" (valid: 0, 1, true, false)"},
      {{{"CEDANA_URL", "ftp://x"}}, "connection.url"},
  };
  for (const auto& c : cases) {
    auto r = LoadConfig("/nonexistent", c.env);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.expect), std::string::npos) << r.error().message();
  }
}

TEST(ConfigTest, UnknownKeyInFileIsAnError) {
  std::string path = WriteTemp(R"({"checkpoint": {"dirr": "/x"}})");
  auto r = LoadConfig(path, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
  EXPECT_NE(r.error().message().find("unknown config key \"checkpoint.dirr\""), std::string::npos);
  EXPECT_NE(r.error().message().find("checkpoint.dir"), std::string::npos);
}

TEST(ConfigTest, MalformedFile) {
  auto r = LoadConfig(WriteTemp("{not json"), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
}

TEST(ConfigTest, SecretsAreMasked) {
  auto c = LoadConfig("/nonexistent", {{"CEDANA_AUTH_TOKEN", "sekrit-token"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->config.auth_token, "sekrit-token");
  for (const auto& s : c->sources)
    if (s.key == "connection.auth_token") EXPECT_EQ(s.value.find("sekrit"), std::string::npos);
}

TEST(ConfigTest, JsonRoundTrip) {
  auto c = LoadConfig("/nonexistent", {{"CEDANA_CHECKPOINT_STREAMS", "3"}, {"CEDANA_SLURM_UNPRIVILEGED", "1"}});
  ASSERT_TRUE(c.has_value());
  auto again = LoadConfig(WriteTemp(ConfigToJson(c->config)), {});
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(again->config.checkpoint_streams, 3);
  EXPECT_TRUE(again->config.slurm_unprivileged);
}

// docs/configuration.md must list every key with its environment variable, and nothing else.
TEST(ConfigTest, DocumentationListsEveryKey) {
  auto doc = fs::ReadFile(std::string(CEDANA_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_TRUE(doc.has_value()) << doc.error().ToString();
  std::set<std::string> documented;
  std::regex row(R"(\|\s*`([a-z_]+\.[a-z_]+)`\s*\|\s*`(CEDANA_[A-Z_]+)`)");
  for (std::sregex_iterator it(doc->begin(), doc->end(), row), end; it != end; ++it) {
    documented.insert((*it)[1].str() + " " + (*it)[2].str());
  }
  std::set<std::string> actual;
  for (const auto& k : ConfigKeys()) actual.insert(k.key + " " + k.env);
  EXPECT_EQ(documented, actual);
}

}  // namespace
}  // namespace cedana
