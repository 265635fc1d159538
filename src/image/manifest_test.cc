#include "image/manifest.h"

#include <gtest/gtest.h>

namespace cedana::image {
namespace {

using nlohmann::json;

Manifest Sample() {
  Manifest m;
  m.id = "20240501T101500Z-abcd";
  m.label = "train";
  m.owner = "alice";
  m.owner_uid = 1000;
  m.owner_gid = 100;
  m.workload_id = "w-1";
  m.job_id = "4242";
  m.node = "node-7";
  m.created_at_ms = 1714558500123;
  m.duration_ms = 5300;
  m.reason = "preemption";
  m.restart_count = 2;
  m.frozen_ms = 4100;
  m.criu_version = "3.19";
  m.kernel = "6.1.0-18-amd64";
  m.codec = Codec::kZstd;
  m.streams = {{"stream-0", 1000, 400, std::string(64, 'a'), {}},
               {"stream-1", 2000, 900, std::string(64, 'b'), {}}};
  m.images_bytes = 2900;
  m.workload = {{"argv", {"python", "train.py", "--lr=0.1"}},
                {"cwd", "/home/alice/ünïcode"},
                {"env_count", 12},
                {"ratio", 0.1}};
  return m;
}

TEST(ManifestTest, JsonRoundTrip) {
  Manifest m = Sample();
  auto parsed = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(ManifestToJson(*parsed), ManifestToJson(m));
  EXPECT_EQ(parsed->id, m.id);
  EXPECT_EQ(parsed->owner_uid, 1000u);
  EXPECT_EQ(parsed->created_at_ms, m.created_at_ms);
  EXPECT_EQ(parsed->codec, Codec::kZstd);
  ASSERT_EQ(parsed->streams.size(), 2u);
  EXPECT_EQ(parsed->streams[1].stored_bytes, 900u);
  EXPECT_EQ(parsed->workload, m.workload);
  EXPECT_EQ(parsed->StoredBytes(), 1300u);
  EXPECT_EQ(parsed->reason, "preemption");
  EXPECT_EQ(parsed->restart_count, 2u);
  EXPECT_EQ(parsed->frozen_ms, 4100);
}

// A manifest written before checkpoints had reasons has none of their fields; what it signed
// is what this build computes for a manifest without a reason, so its MAC still verifies.
TEST(ManifestTest, AManifestWithoutAReasonKeepsItsMac) {
  Manifest m = Sample();
  m.reason.clear();
  SignManifest(&m, "k");
  json j = json::parse(ManifestToJson(m));
  for (const char* key : {"reason", "restart_count", "frozen_ms"})
    EXPECT_FALSE(j.contains(key)) << key;
  auto parsed = ParseManifest(j.dump());
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->reason, "");
  EXPECT_TRUE(VerifyManifest(*parsed, "k").ok());
}

// A stream stored raw says so; the others, and manifests from before, carry no such field.
TEST(ManifestTest, AStreamStoredRawSaysSo) {
  Manifest m = Sample();
  json plain = json::parse(ManifestToJson(m));
  EXPECT_FALSE(plain["streams"][0].contains("stored_raw"));
  m.streams[1].stored_raw = true;
  json j = json::parse(ManifestToJson(m));
  EXPECT_FALSE(j["streams"][0].contains("stored_raw"));
  EXPECT_EQ(j["streams"][1]["stored_raw"], true);
  auto parsed = ParseManifest(j.dump());
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->CodecOf(parsed->streams[0]), Codec::kZstd);
  EXPECT_EQ(parsed->CodecOf(parsed->streams[1]), Codec::kNone);
}

// A manifest written before stream digests were named (format_version 1 or 2, SHA-256): what
// such a build wrote for `m`.
json AsSha256Version(Manifest m, int version) {
  m.format_version = version;
  m.digest = Digest::kSha256;
  return json::parse(ManifestToJson(m));
}

TEST(ManifestTest, NewManifestsNameTheirDigest) {
  json j = json::parse(ManifestToJson(Sample()));
  EXPECT_EQ(j["format_version"], kManifestFormatVersion);
  EXPECT_EQ(j["digest"], "blake3");
  EXPECT_EQ(j["streams"][0]["blake3"], std::string(64, 'a'));
  EXPECT_FALSE(j["streams"][0].contains("sha256"));
  auto parsed = ParseManifest(j.dump());
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->digest, Digest::kBlake3);
  EXPECT_EQ(parsed->streams[0].digest, std::string(64, 'a'));
}

// Checkpoints made before BLAKE3 are read as SHA-256, and their text, and so their MAC, is what
// this build computes again.
TEST(ManifestTest, OlderSha256ManifestsKeepTheirTextAndMac) {
  Manifest m = Sample();
  m.streams[0].head = {100, std::string(64, 'c')};
  m.format_version = kSha256ManifestFormatVersion;
  m.digest = Digest::kSha256;
  SignManifest(&m, "k");
  const std::string text = ManifestToJson(m);
  json j = json::parse(text);
  EXPECT_FALSE(j.contains("digest"));
  EXPECT_EQ(j["streams"][0]["sha256"], std::string(64, 'a'));
  EXPECT_EQ(j["streams"][0]["head"]["sha256"], std::string(64, 'c'));
  auto parsed = ParseManifest(text);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->digest, Digest::kSha256);
  EXPECT_EQ(parsed->streams[0].head.digest, std::string(64, 'c'));
  EXPECT_EQ(ManifestToJson(*parsed), text);
  EXPECT_TRUE(VerifyManifest(*parsed, "k").ok());
}

struct BadCase {
  std::string field;  // must appear in the message
  std::function<void(json&)> edit;
};

TEST(ManifestTest, RejectsMalformedNamingTheField) {
  const BadCase cases[] = {
      {"format_version", [](json& j) { j["format_version"] = 4; }},
      {"format_version", [](json& j) { j["format_version"] = 0; }},
      {"chunk_index", [](json& j) { j = AsSha256Version(Sample(), 2); }},
      {"digest", [](json& j) { j.erase("digest"); }},
      {"digest", [](json& j) { j["digest"] = "md5"; }},
      {"streams[0].blake3", [](json& j) { j["streams"][0].erase("blake3"); }},
      // A version 1 manifest whose streams carry BLAKE3 digests under the new key.
      {"streams[0].sha256", [](json& j) { j["format_version"] = 1; }},
      {"streams[0].sha256",
       [](json& j) {
         j = AsSha256Version(Sample(), 1);
         j["streams"][0]["sha256"] = "xyz";
       }},
      {"chunk_index", [](json& j) { j["chunk_index"] = json::object(); }},
      {"format_version", [](json& j) { j.erase("format_version"); }},
      {"format_version", [](json& j) { j["format_version"] = "1"; }},
      {"id", [](json& j) { j.erase("id"); }},
      {"id", [](json& j) { j["id"] = ""; }},
      {"label", [](json& j) { j["label"] = 7; }},
      {"owner", [](json& j) { j.erase("owner"); }},
      {"owner_uid", [](json& j) { j["owner_uid"] = -1; }},
      {"owner_uid", [](json& j) { j["owner_uid"] = 1ull << 40; }},
      {"created_at_ms", [](json& j) { j["created_at_ms"] = 1.5; }},
      {"codec", [](json& j) { j["codec"] = "bzip2"; }},
      {"streams", [](json& j) { j["streams"] = json::array(); }},
      {"streams", [](json& j) { j.erase("streams"); }},
      {"streams[1].name", [](json& j) { j["streams"][1]["name"] = "stream-7"; }},
      {"streams[0].blake3", [](json& j) { j["streams"][0]["blake3"] = "xyz"; }},
      {"streams[0].stored_bytes", [](json& j) { j["streams"][0].erase("stored_bytes"); }},
      {"streams[1].stored_raw", [](json& j) { j["streams"][1]["stored_raw"] = "yes"; }},
      {"workload", [](json& j) { j["workload"] = json::array(); }},
      {"reason", [](json& j) { j["reason"] = 3; }},
      {"reason", [](json& j) { j["reason"] = std::string(65, 'x'); }},
      {"restart_count", [](json& j) { j["restart_count"] = -1; }},
      {"frozen_ms", [](json& j) { j["frozen_ms"] = "long"; }},
  };
  for (const auto& c : cases) {
    json j = json::parse(ManifestToJson(Sample()));
    c.edit(j);
    auto parsed = ParseManifest(j.dump());
    ASSERT_EQ(parsed.error().code(), Code::kInvalidArgument) << c.field;
    EXPECT_NE(parsed.error().message().find(c.field), std::string::npos)
        << c.field << ": " << parsed.error().message();
  }
}

TEST(ManifestTest, RejectsNonJson) {
  for (const char* text : {"", "{", "[1,2]", "\"x\"", "{\"id\": }"}) {
    EXPECT_EQ(ParseManifest(text).error().code(), Code::kInvalidArgument) << text;
  }
}

TEST(ManifestTest, SignAndVerify) {
  Manifest m = Sample();
  SignManifest(&m, "cluster-key");
  EXPECT_EQ(m.mac.size(), 64u);
  EXPECT_TRUE(VerifyManifest(m, "cluster-key").ok());
  // Survives the trip through manifest.json.
  auto parsed = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(VerifyManifest(*parsed, "cluster-key").ok());

  Status wrong_key = VerifyManifest(m, "other-key");
  EXPECT_EQ(wrong_key.code(), Code::kPermissionDenied);
  EXPECT_NE(wrong_key.message().find("manifest MAC mismatch: checkpoint " + m.id),
            std::string::npos)
      << wrong_key.message();
}

TEST(ManifestTest, VerifyFailsAfterAnyChange) {
  const std::function<void(Manifest&)> edits[] = {
      [](Manifest& m) { m.label = "other"; },
      [](Manifest& m) { m.owner_uid = 0; },
      [](Manifest& m) { m.streams[0].digest[0] = 'c'; },
      [](Manifest& m) { m.digest = Digest::kSha256; },
      [](Manifest& m) { m.workload["argv"][0] = "sh"; },
      [](Manifest& m) { m.codec = Codec::kNone; },
      [](Manifest& m) { m.mac.clear(); },
      [](Manifest& m) { m.reason = "manual"; },
      [](Manifest& m) { m.frozen_ms = 1; },
  };
  for (size_t i = 0; i < std::size(edits); ++i) {
    Manifest m = Sample();
    SignManifest(&m, "k");
    edits[i](m);
    EXPECT_EQ(VerifyManifest(m, "k").code(), Code::kPermissionDenied) << "edit " << i;
  }
}

TEST(ManifestTest, EditedJsonFailsVerify) {
  Manifest m = Sample();
  SignManifest(&m, "k");
  json j = json::parse(ManifestToJson(m));
  j["owner_uid"] = 0;  // a user tries to have root restore their image
  auto parsed = ParseManifest(j.dump());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(VerifyManifest(*parsed, "k").code(), Code::kPermissionDenied);
}

}  // namespace
}  // namespace cedana::image
