#include "common/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
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
  std::string path =
      WriteTemp(R"({"checkpoint": {"streams": 2, "compression": "gzip", "dir": "/a"}})");
  auto c = LoadConfig(path, {{"CEDANA_CHECKPOINT_STREAMS", "4"}}, {{"checkpoint.dir", "/b"}});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->config.checkpoint_streams, 4);
  EXPECT_EQ(c->config.checkpoint_compression, "gzip");
  EXPECT_EQ(c->config.checkpoint_dir, "/b");
  std::map<std::string, std::string> origin;
  for (const auto& s : c->sources) origin[s.key] = s.origin;
  EXPECT_EQ(origin["checkpoint.streams"], "env CEDANA_CHECKPOINT_STREAMS");
  EXPECT_EQ(origin["checkpoint.compression"], "file " + path);
  EXPECT_EQ(origin["checkpoint.dir"], "flag");
}

TEST(ConfigTest, BadValuesNameKeyAndValidValues) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string expect;  // substring of the message
  } cases[] = {
      {{{"CEDANA_CHECKPOINT_COMPRESSION", "bzip2"}},
       "checkpoint.compression: invalid value \"bzip2\" (valid: none, gzip, lz4, zstd)"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "0"}},
       "checkpoint.streams: invalid value \"0\" (valid: an integer from 1 to 64)"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "1000"}}, "an integer from 1 to 64"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "4x"}}, "invalid value \"4x\""},
      {{{"CEDANA_CHECKPOINT_DIR", "relative/dir"}}, "an absolute path or s3://bucket[/prefix]"},
      {{{"CEDANA_SLURM_UNPRIVILEGED", "yes"}},
       "slurm.unprivileged: invalid value \"yes\" (valid: 0, 1, true, false)"},
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
  for (const auto& s : c->sources) {
    if (s.key == "connection.auth_token") {
      EXPECT_EQ(s.value.find("sekrit"), std::string::npos);
    }
  }
}

// The AWS SDKs' variables: the more specific one wins, the other is the fallback.
TEST(ConfigTest, AwsVariablesAndTheirFallbacks) {
  auto c = LoadConfig("/nonexistent", {{"AWS_DEFAULT_REGION", "eu-west-1"},
                                       {"AWS_ENDPOINT_URL", "http://generic:1"},
                                       {"AWS_ENDPOINT_URL_S3", "http://s3only:2"},
                                       {"AWS_SECRET_ACCESS_KEY", "sekrit-key"}});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->config.s3_region, "eu-west-1");
  EXPECT_EQ(c->config.s3_endpoint_url, "http://s3only:2");
  std::map<std::string, ConfigSource> by_key;
  for (const auto& s : c->sources) by_key[s.key] = s;
  EXPECT_EQ(by_key["s3.region"].origin, "env AWS_DEFAULT_REGION");
  EXPECT_EQ(by_key["s3.secret_access_key"].value.find("sekrit"), std::string::npos);

  c = LoadConfig("/nonexistent",
                 {{"AWS_DEFAULT_REGION", "eu-west-1"}, {"AWS_REGION", "ap-south-1"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->config.s3_region, "ap-south-1");
  EXPECT_EQ(c->config.s3_endpoint_url, "");
}

TEST(ConfigTest, JsonRoundTrip) {
  auto c = LoadConfig("/nonexistent",
                      {{"CEDANA_CHECKPOINT_STREAMS", "3"}, {"CEDANA_SLURM_UNPRIVILEGED", "1"}});
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
  // | `key` | `ENV`[, `ALIAS`...] |
  std::regex row(
      R"(\|\s*`([a-z0-9_]+\.[a-z0-9_]+)`\s*\|\s*(`[A-Z0-9_]+`(,\s*`[A-Z0-9_]+`)*)\s*\|)");
  for (std::sregex_iterator it(doc->begin(), doc->end(), row), end; it != end; ++it) {
    documented.insert((*it)[1].str() + " " + (*it)[2].str());
  }
  std::set<std::string> actual;
  for (const auto& k : ConfigKeys()) {
    std::string envs = "`" + k.env + "`";
    for (const auto& alias : k.env_aliases) envs += ", `" + alias + "`";
    actual.insert(k.key + " " + envs);
  }
  EXPECT_EQ(documented, actual);
}

}  // namespace
}  // namespace cedana
