#include "common/config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  EXPECT_EQ(c->config.node.checkpoint_streams, 1);
  EXPECT_EQ(c->config.socket_path, "/run/cedana/cedana.sock");
  for (const auto& s : c->sources) EXPECT_EQ(s.origin, "default") << s.key;
}

TEST(ConfigTest, PrecedenceFileEnvFlag) {
  std::string path =
      WriteTemp(R"({"checkpoint": {"streams": 2, "compression": "gzip", "dir": "/a"}})");
  auto c = LoadConfig(path, {{"CEDANA_CHECKPOINT_STREAMS", "4"}}, {{"checkpoint.dir", "/b"}});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->config.node.checkpoint_streams, 4);
  EXPECT_EQ(c->config.node.checkpoint_compression, Codec::kGzip);
  EXPECT_EQ(c->config.checkpoint_dir, "/b");
  std::map<std::string, std::string> origin;
  for (const auto& s : c->sources) origin[s.key] = s.origin;
  EXPECT_EQ(origin["checkpoint.streams"], "env CEDANA_CHECKPOINT_STREAMS");
  EXPECT_EQ(origin["checkpoint.compression"], "file " + path);
  EXPECT_EQ(origin["checkpoint.dir"], "flag");
}

TEST(ConfigTest, DedupAndDirectDumpsCombine) {
  std::string path = WriteTemp(R"({"checkpoint": {"direct": true}})");
  auto on = LoadConfig("/nonexistent/config.json", {{"CEDANA_CHECKPOINT_DEDUP", "1"}});
  ASSERT_TRUE(on.has_value()) << on.error().ToString();
  EXPECT_TRUE(on->config.node.checkpoint_dedup);
  EXPECT_FALSE(on->config.node.checkpoint_direct);

  // A deduplicated direct dump cuts the pages into chunks as CRIU hands them over.
  auto both = LoadConfig(path, {{"CEDANA_CHECKPOINT_DEDUP", "1"}});
  ASSERT_TRUE(both.has_value()) << both.error().ToString();
  EXPECT_TRUE(both->config.node.checkpoint_dedup);
  EXPECT_TRUE(both->config.node.checkpoint_direct);
}

// A setting of a few words is its enum inside and its word everywhere it is shown.
TEST(ConfigTest, WordSettingsAreEnumsAndPrintAsTheirWords) {
  auto c = LoadConfig("/nonexistent/config.json", {{"CEDANA_CHECKPOINT_TCP", "close"},
                                                   {"CEDANA_CRIU_NO_BREAKPOINTS", "off"},
                                                   {"CEDANA_S3_ADDRESSING", "path"},
                                                   {"CEDANA_LOG_LEVEL", "warn"},
                                                   {"CEDANA_CHECKPOINT_COMPRESSION", "lz4"}});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->config.node.checkpoint_tcp, OutsideTcp::kClose);
  EXPECT_EQ(c->config.node.criu_no_breakpoints, BreakpointFallback::kOff);
  EXPECT_EQ(c->config.s3.addressing, S3Addressing::kPath);
  EXPECT_EQ(c->config.log_level, log::Level::kWarn);
  EXPECT_EQ(c->config.node.checkpoint_compression, Codec::kLz4);
  std::map<std::string, std::string> shown;
  for (const auto& s : c->sources) shown[s.key] = s.value;
  EXPECT_EQ(shown["checkpoint.tcp"], "close");
  EXPECT_EQ(shown["criu.no_breakpoints"], "off");
  EXPECT_EQ(shown["s3.addressing"], "path");
  EXPECT_EQ(shown["daemon.log_level"], "warn");
  EXPECT_EQ(shown["checkpoint.compression"], "lz4");
  nlohmann::json printed = nlohmann::json::parse(ConfigToJson(c->config));
  EXPECT_EQ(printed["checkpoint"]["tcp"], "close");
  EXPECT_EQ(printed["s3"]["addressing"], "path");

  std::map<std::string, std::string> defaults;
  for (const ConfigKeyInfo& k : ConfigKeys()) defaults[k.key] = k.default_value;
  EXPECT_EQ(defaults["checkpoint.tcp"], "refuse");
  EXPECT_EQ(defaults["daemon.log_level"], "info");
  EXPECT_EQ(defaults["checkpoint.compression"], "zstd");
}

TEST(ConfigTest, BadValuesNameKeyAndValidValues) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string expect;  // substring of the message
  } cases[] = {
      {{{"CEDANA_CHECKPOINT_COMPRESSION", "bzip2"}},
       "checkpoint.compression: invalid value \"bzip2\" (valid: none, gzip, lz4, zstd)"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "65"}},
       "checkpoint.streams: invalid value \"65\" (valid: an integer from 1 to 64)"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "1000"}}, "an integer from 1 to 64"},
      {{{"CEDANA_CHECKPOINT_STREAMS", "4x"}}, "invalid value \"4x\""},
      {{{"CEDANA_CHECKPOINT_DIR", "relative/dir"}}, "an absolute path or s3://bucket[/prefix]"},
      {{{"CEDANA_SLURM_UNPRIVILEGED", "yes"}},
       "slurm.unprivileged: invalid value \"yes\" (valid: 0, 1, true, false)"},
      {{{"CEDANA_URL", "ftp://x"}}, "connection.url"},
      {{{"CEDANA_CHECKPOINT_TCP", "open"}},
       "checkpoint.tcp: invalid value \"open\" (valid: refuse, established, close)"},
      {{{"CEDANA_S3_ADDRESSING", "sideways"}},
       "s3.addressing: invalid value \"sideways\" (valid: auto, path, virtual)"},
      {{{"CEDANA_LOG_LEVEL", "trace2"}}, "(valid: debug, info, warn, error)"},
      {{{"CEDANA_CHECKPOINT_LZ4_ACCELERATION", "0"}},
       "checkpoint.lz4_acceleration: invalid value \"0\" (valid: an integer from 1 to 64)"},
  };
  for (const auto& c : cases) {
    auto r = LoadConfig("/nonexistent", c.env);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.expect), std::string::npos) << r.error().message();
  }
}

// A typo, or a key of another version: said, and ignored, so that every command still works.
TEST(ConfigTest, UnknownKeyInFileIsAWarning) {
  auto r = LoadConfig(WriteTemp(R"({"checkpoint": {"dirr": "/x", "keep": 3}})"), {});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->config.node.checkpoint_keep, 3);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("ignoring config key \"checkpoint.dirr\""), std::string::npos)
      << r->warnings[0];
}

// A key renamed for the vocabulary is still read under its old name, with a warning that says
// the new one; the new name wins when both are set.
TEST(ConfigTest, AFormerKeyNameIsReadWithAWarning) {
  auto r = LoadConfig(WriteTemp(R"({"checkpoint": {"streaming": true}})"), {});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE(r->config.node.checkpoint_direct);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("checkpoint.streaming in file"), std::string::npos)
      << r->warnings[0];
  EXPECT_NE(r->warnings[0].find("is now called checkpoint.direct"), std::string::npos);

  r = LoadConfig("/nonexistent", {{"CEDANA_CHECKPOINT_STREAMING", "1"}});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_TRUE(r->config.node.checkpoint_direct);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(
      r->warnings[0].find("CEDANA_CHECKPOINT_STREAMING is now called CEDANA_CHECKPOINT_DIRECT"),
      std::string::npos)
      << r->warnings[0];

  r = LoadConfig("/nonexistent",
                 {{"CEDANA_CHECKPOINT_STREAMING", "1"}, {"CEDANA_CHECKPOINT_DIRECT", "0"}});
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->config.node.checkpoint_direct);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ConfigTest, StrictMakesAnUnknownKeyAnError) {
  auto r = LoadConfig(WriteTemp(R"({"strict": true, "checkpoint": {"dirr": "/x"}})"), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
  EXPECT_NE(r.error().message().find("unknown config key \"checkpoint.dirr\""), std::string::npos);
  EXPECT_NE(r.error().message().find("checkpoint.dir"), std::string::npos);
  EXPECT_FALSE(LoadConfig(WriteTemp(R"({"strict": "yes"})"), {}).has_value());
  // A flag names a key of ours or is refused, strict or not.
  EXPECT_FALSE(LoadConfig("/nonexistent", {}, {{"checkpoint.dirr", "/x"}}).has_value());
}

// /etc/cedana/config.json as Cedana writes it: its keys are read as aliases of ours, its
// spellings mapped, and what means nothing here is ignored with a warning each.
TEST(ConfigTest, CedanasOwnConfigIsReadAsOurs) {
  const char* cedana = R"({
    "address": "0.0.0.0:8080", "protocol": "tcp", "log_level": "trace", "metrics": true,
    "connection": {"url": "https://x.cedana.ai", "auth_token": "tok", "cluster_id": "c1"},
    "checkpoint": {"dir": "/data/ckpt", "compression": "tar", "streams": 0,
                   "stream_memory_limit": 512, "async": false},
    "db": {"remote": false, "path": "/tmp/cedana.db"},
    "profiling": {"enabled": true, "precision": "auto"},
    "criu": {"binary_path": "/opt/criu/criu", "leave_running": false, "log_level": 4},
    "gpu": {"pool_size": 0}, "plugins": {"builds": "release", "lib_dir": "/usr/local/lib"},
    "aws": {"access_key_id": "AK", "secret_access_key": "SK", "region": "eu-west-1",
            "endpoint": "http://127.0.0.1:9000"},
    "slurm": {"unprivileged": false}, "k8s": {"fallback_cold_start": false}
  })";
  auto r = LoadConfig(WriteTemp(cedana), {});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const Config& c = r->config;
  EXPECT_EQ(c.log_level, log::Level::kDebug);
  EXPECT_EQ(c.url, "https://x.cedana.ai");
  EXPECT_EQ(c.checkpoint_dir, "/data/ckpt");
  EXPECT_EQ(c.node.checkpoint_compression, Codec::kNone);
  EXPECT_EQ(c.node.checkpoint_streams, 1);
  EXPECT_EQ(c.node.checkpoint_memory_limit_mib, 512);
  EXPECT_EQ(c.node.criu_binary, "/opt/criu/criu");
  EXPECT_EQ(c.s3.access_key_id, "AK");
  EXPECT_EQ(c.s3.secret_access_key, "SK");
  EXPECT_EQ(c.s3.region, "eu-west-1");
  EXPECT_EQ(c.s3.endpoint_url, "http://127.0.0.1:9000");
  auto origin = [&](const std::string& key) {
    for (const auto& s : r->sources)
      if (s.key == key) return s.origin;
    return std::string();
  };
  EXPECT_NE(origin("criu.binary").find("(Cedana's criu.binary_path)"), std::string::npos)
      << origin("criu.binary");
  EXPECT_NE(origin("checkpoint.compression").find("Cedana's \"tar\""), std::string::npos);
  EXPECT_NE(origin("daemon.log_level").find("Cedana's log_level, Cedana's \"trace\""),
            std::string::npos)
      << origin("daemon.log_level");
  // address, protocol, metrics, connection.cluster_id, checkpoint.async, db.remote, db.path,
  // profiling.enabled, profiling.precision, criu.leave_running, criu.log_level, gpu.pool_size,
  // plugins.builds, plugins.lib_dir, k8s.fallback_cold_start.
  EXPECT_EQ(r->warnings.size(), 15u);
  std::string all;
  for (const auto& w : r->warnings) all += w + "\n";
  EXPECT_NE(all.find("\"criu.log_level\""), std::string::npos) << all;
  EXPECT_EQ(all.find("binary_path"), std::string::npos) << all;
}

TEST(ConfigTest, CedanasVariablesAreReadToo) {
  auto r = LoadConfig("/nonexistent", {{"CEDANA_CRIU_BINARY_PATH", "/opt/criu/criu"},
                                       {"AWS_ENDPOINT", "http://127.0.0.1:9000"}});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->config.node.criu_binary, "/opt/criu/criu");
  EXPECT_EQ(r->config.s3.endpoint_url, "http://127.0.0.1:9000");
  // Ours first, when both are set.
  r = LoadConfig("/nonexistent", {{"CEDANA_CRIU_BINARY_PATH", "/opt/criu/criu"},
                                  {"CEDANA_CRIU_BINARY", "/usr/sbin/criu"}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->config.node.criu_binary, "/usr/sbin/criu");
}

// A value that is no string, integer or bool: refused for a key of ours, ignored for another.
TEST(ConfigTest, NonScalarValues) {
  auto bad = LoadConfig(WriteTemp(R"({"checkpoint": {"keep": [1]}})"), {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("checkpoint.keep"), std::string::npos);
  // Also where an empty string would be a valid value.
  auto bad_string = LoadConfig(WriteTemp(R"({"criu": {"binary": ["/x"]}})"), {});
  ASSERT_FALSE(bad_string.has_value());
  EXPECT_NE(bad_string.error().message().find("expected a string, integer or bool"),
            std::string::npos)
      << bad_string.error().message();
  auto ignored = LoadConfig(WriteTemp(R"({"gpu": {"devices": [0, 1]}, "ratio": 0.5})"), {});
  ASSERT_TRUE(ignored.has_value()) << ignored.error().ToString();
  EXPECT_EQ(ignored->warnings.size(), 2u);
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
  EXPECT_EQ(c->config.s3.region, "eu-west-1");
  EXPECT_EQ(c->config.s3.endpoint_url, "http://s3only:2");
  std::map<std::string, ConfigSource> by_key;
  for (const auto& s : c->sources) by_key[s.key] = s;
  EXPECT_EQ(by_key["s3.region"].origin, "env AWS_DEFAULT_REGION");
  EXPECT_EQ(by_key["s3.secret_access_key"].value.find("sekrit"), std::string::npos);

  c = LoadConfig("/nonexistent",
                 {{"AWS_DEFAULT_REGION", "eu-west-1"}, {"AWS_REGION", "ap-south-1"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->config.s3.region, "ap-south-1");
  EXPECT_EQ(c->config.s3.endpoint_url, "");
}

TEST(ConfigTest, JsonRoundTrip) {
  auto c = LoadConfig("/nonexistent",
                      {{"CEDANA_CHECKPOINT_STREAMS", "3"}, {"CEDANA_SLURM_UNPRIVILEGED", "1"}});
  ASSERT_TRUE(c.has_value());
  auto again = LoadConfig(WriteTemp(ConfigToJson(c->config)), {});
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(again->config.node.checkpoint_streams, 3);
  EXPECT_TRUE(again->config.node.slurm_unprivileged);
  EXPECT_TRUE(again->warnings.empty());
  // Each value in its JSON type, as a person would write it.
  auto j = nlohmann::json::parse(ConfigToJson(c->config));
  EXPECT_TRUE(j["checkpoint"]["streams"].is_number_integer()) << j.dump();
  EXPECT_TRUE(j["slurm"]["unprivileged"].is_boolean()) << j.dump();
  EXPECT_TRUE(j["checkpoint"]["dir"].is_string()) << j.dump();
  EXPECT_TRUE(j["s3"]["region"].is_string()) << j.dump();
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
