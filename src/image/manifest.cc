#include "image/manifest.h"

#include "common/bounded_json.h"
#include "common/fs.h"

#include <fmt/format.h>

#include <limits>

#include "image/checksum.h"

namespace cedana::image {
namespace {

using nlohmann::json;

constexpr int kManifestIndent = 2;

// Versions 1 and 2 name no digest: their streams' is SHA-256.
bool NamesDigest(int format_version) { return format_version >= kManifestFormatVersion; }

json ToJsonObject(const Manifest& m) {
  // A stream's digest is keyed by the algorithm's name: "sha256" in versions 1 and 2.
  const std::string digest_key(DigestName(m.digest));
  json streams = json::array();
  for (const StreamInfo& s : m.streams) {
    json stream = {{"name", s.name},
                   {"raw_bytes", s.raw_bytes},
                   {"stored_bytes", s.stored_bytes},
                   {digest_key, s.digest}};
    // Only when there is one: older manifests keep their exact text, and so their MAC.
    if (!s.head.digest.empty())
      stream["head"] = {{"raw_bytes", s.head.raw_bytes}, {digest_key, s.head.digest}};
    if (s.stored_raw) stream["stored_raw"] = true;
    streams.push_back(std::move(stream));
  }
  // nlohmann::json objects keep keys sorted, which makes the text (and so the MAC) canonical.
  json j{{"format_version", m.format_version},
         {"id", m.id},
         {"label", m.label},
         {"owner", m.owner},
         {"owner_uid", m.owner_uid},
         {"owner_gid", m.owner_gid},
         {"workload_id", m.workload_id},
         {"job_id", m.job_id},
         {"node", m.node},
         {"created_at_ms", m.created_at_ms},
         {"duration_ms", m.duration_ms},
         {"criu_version", m.criu_version},
         {"kernel", m.kernel},
         {"codec", std::string(CodecName(m.codec))},
         {"streams", std::move(streams)},
         {"images_bytes", m.images_bytes},
         {"workload", m.workload},
         {"mac", m.mac}};
  if (NamesDigest(m.format_version)) j["digest"] = digest_key;
  if (m.chunk_index) {
    const ChunkIndexInfo& c = *m.chunk_index;
    j["chunk_index"] = {{"bytes", c.bytes},           {"sha256", c.sha256},
                        {"chunks", c.chunks},         {"raw_bytes", c.raw_bytes},
                        {"new_chunks", c.new_chunks}, {"new_stored_bytes", c.new_stored_bytes}};
  }
  // Only when there is one, as heads above.
  if (!m.reason.empty()) {
    j["reason"] = m.reason;
    j["restart_count"] = m.restart_count;
    j["frozen_ms"] = m.frozen_ms;
  }
  return j;
}

// Invalid UTF-8 (say, in a workload's argv) is replaced rather than thrown on; parse and
// re-serialize then give the same text, so the MAC still verifies.
std::string Dump(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// The bytes the MAC covers: the manifest without its "mac" field, compact.
std::string MacInput(const Manifest& m) {
  json j = ToJsonObject(m);
  j.erase("mac");
  return Dump(j, -1);
}

// Field readers: each fails with kInvalidArgument naming the field.
class Fields {
 public:
  Fields(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  Status String(const char* key, bool required, std::string* out) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return required ? Missing(key) : OkStatus();
    if (!it->is_string()) return Bad(key, "a string");
    *out = it->get<std::string>();
    if (required && out->empty()) return Bad(key, "a non-empty string");
    return OkStatus();
  }

  // A required hex digest: 64 lowercase hex digits (SHA-256 and BLAKE3 alike).
  Status HexDigest(const char* key, std::string* out) const {
    CEDANA_RETURN_IF_ERROR(String(key, true, out));
    if (out->size() != 64 || out->find_first_not_of("0123456789abcdef") != std::string::npos)
      return Bad(key, "64 lowercase hex digits");
    return OkStatus();
  }

  template <typename T>
  Status Int(const char* key, bool required, T* out) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return required ? Missing(key) : OkStatus();
    if (it->is_number_unsigned()) {
      uint64_t v = it->get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return Bad(key, "in range");
      *out = static_cast<T>(v);
      return OkStatus();
    }
    if (it->is_number_integer()) {
      int64_t v = it->get<int64_t>();
      if (!std::numeric_limits<T>::is_signed && v < 0) return Bad(key, "not negative");
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min())) return Bad(key, "in range");
      *out = static_cast<T>(v);
      return OkStatus();
    }
    return Bad(key, "an integer");
  }

  Status Missing(const char* key) const {
    return InvalidArgumentError(fmt::format("manifest field {}{} is missing", prefix_, key));
  }
  Status Bad(const char* key, const char* want) const {
    return InvalidArgumentError(fmt::format("manifest field {}{} must be {}", prefix_, key, want));
  }

 private:
  const json& obj_;
  std::string prefix_;
};

Status ParseStreams(const json& obj, Manifest* m) {
  auto it = obj.find("streams");
  if (it == obj.end()) return InvalidArgumentError("manifest field streams is missing");
  if (!it->is_array() || it->empty() || it->size() > 64) {
    return InvalidArgumentError("manifest field streams must be an array of 1 to 64 streams");
  }
  const std::string digest_key(DigestName(m->digest));
  for (size_t i = 0; i < it->size(); ++i) {
    const json& s = (*it)[i];
    std::string prefix = fmt::format("streams[{}].", i);
    if (!s.is_object()) {
      return InvalidArgumentError(fmt::format("manifest field streams[{}] must be an object", i));
    }
    Fields f(s, prefix);
    StreamInfo info;
    CEDANA_RETURN_IF_ERROR(f.String("name", true, &info.name));
    if (info.name != fmt::format("stream-{}", i)) return f.Bad("name", "stream-<index>");
    CEDANA_RETURN_IF_ERROR(f.Int("raw_bytes", true, &info.raw_bytes));
    CEDANA_RETURN_IF_ERROR(f.Int("stored_bytes", true, &info.stored_bytes));
    CEDANA_RETURN_IF_ERROR(f.HexDigest(digest_key.c_str(), &info.digest));
    if (auto head = s.find("head"); head != s.end()) {
      if (!head->is_object()) return f.Bad("head", "an object");
      Fields h(*head, prefix + "head.");
      CEDANA_RETURN_IF_ERROR(h.Int("raw_bytes", true, &info.head.raw_bytes));
      CEDANA_RETURN_IF_ERROR(h.HexDigest(digest_key.c_str(), &info.head.digest));
      if (info.head.raw_bytes > info.raw_bytes)
        return h.Bad("raw_bytes", "at most the stream's raw_bytes");
    }
    if (auto raw = s.find("stored_raw"); raw != s.end()) {
      if (!raw->is_boolean()) return f.Bad("stored_raw", "a boolean");
      info.stored_raw = raw->get<bool>();
    }
    m->streams.push_back(std::move(info));
  }
  return OkStatus();
}

Status ParseChunkIndexInfo(const json& obj, Manifest* m) {
  auto it = obj.find("chunk_index");
  if (it == obj.end()) {
    if (m->format_version == kSha256DedupManifestFormatVersion)
      return InvalidArgumentError("manifest field chunk_index is missing");
    return OkStatus();
  }
  if (m->format_version == kSha256ManifestFormatVersion)
    return InvalidArgumentError(
        fmt::format("manifest field chunk_index needs format_version {} or {}",
                    kSha256DedupManifestFormatVersion, kManifestFormatVersion));
  if (!it->is_object()) return InvalidArgumentError("manifest field chunk_index must be an object");
  Fields f(*it, "chunk_index.");
  ChunkIndexInfo c;
  CEDANA_RETURN_IF_ERROR(f.Int("bytes", true, &c.bytes));
  CEDANA_RETURN_IF_ERROR(f.HexDigest("sha256", &c.sha256));
  CEDANA_RETURN_IF_ERROR(f.Int("chunks", true, &c.chunks));
  CEDANA_RETURN_IF_ERROR(f.Int("raw_bytes", true, &c.raw_bytes));
  CEDANA_RETURN_IF_ERROR(f.Int("new_chunks", true, &c.new_chunks));
  CEDANA_RETURN_IF_ERROR(f.Int("new_stored_bytes", true, &c.new_stored_bytes));
  m->chunk_index = std::move(c);
  return OkStatus();
}

Status ParseFields(const json& obj, Manifest* m) {
  Fields f(obj, "");
  CEDANA_RETURN_IF_ERROR(f.Int("format_version", true, &m->format_version));
  if (m->format_version < kSha256ManifestFormatVersion ||
      m->format_version > kManifestFormatVersion) {
    return InvalidArgumentError(
        fmt::format("manifest field format_version is {}, this build reads versions {} to {}",
                    m->format_version, kSha256ManifestFormatVersion, kManifestFormatVersion));
  }
  m->digest = Digest::kSha256;
  if (NamesDigest(m->format_version)) {
    std::string digest;
    CEDANA_RETURN_IF_ERROR(f.String("digest", true, &digest));
    std::optional<Digest> parsed = ParseDigest(digest);
    if (!parsed) return f.Bad("digest", ("one of " + ValueNames(kDigestNames)).c_str());
    m->digest = *parsed;
  }
  CEDANA_RETURN_IF_ERROR(f.String("id", true, &m->id));
  CEDANA_RETURN_IF_ERROR(f.String("label", true, &m->label));
  CEDANA_RETURN_IF_ERROR(f.String("owner", true, &m->owner));
  CEDANA_RETURN_IF_ERROR(f.Int("owner_uid", false, &m->owner_uid));
  CEDANA_RETURN_IF_ERROR(f.Int("owner_gid", false, &m->owner_gid));
  CEDANA_RETURN_IF_ERROR(f.String("workload_id", false, &m->workload_id));
  CEDANA_RETURN_IF_ERROR(f.String("job_id", false, &m->job_id));
  CEDANA_RETURN_IF_ERROR(f.String("node", false, &m->node));
  CEDANA_RETURN_IF_ERROR(f.Int("created_at_ms", true, &m->created_at_ms));
  CEDANA_RETURN_IF_ERROR(f.Int("duration_ms", false, &m->duration_ms));
  CEDANA_RETURN_IF_ERROR(f.String("reason", false, &m->reason));
  if (m->reason.size() > 64) return f.Bad("reason", "at most 64 characters");
  CEDANA_RETURN_IF_ERROR(f.Int("restart_count", false, &m->restart_count));
  CEDANA_RETURN_IF_ERROR(f.Int("frozen_ms", false, &m->frozen_ms));
  CEDANA_RETURN_IF_ERROR(f.String("criu_version", false, &m->criu_version));
  CEDANA_RETURN_IF_ERROR(f.String("kernel", false, &m->kernel));
  std::string codec;
  CEDANA_RETURN_IF_ERROR(f.String("codec", true, &codec));
  auto parsed = ParseCodec(codec);
  if (!parsed.has_value()) return std::move(parsed).error().WithContext("manifest field codec");
  m->codec = *parsed;
  CEDANA_RETURN_IF_ERROR(ParseStreams(obj, m));
  CEDANA_RETURN_IF_ERROR(f.Int("images_bytes", false, &m->images_bytes));
  CEDANA_RETURN_IF_ERROR(ParseChunkIndexInfo(obj, m));
  if (auto it = obj.find("workload"); it != obj.end()) {
    if (!it->is_object()) return f.Bad("workload", "an object");
    m->workload = *it;
  }
  CEDANA_RETURN_IF_ERROR(f.String("mac", false, &m->mac));
  return OkStatus();
}

}  // namespace

uint64_t Manifest::StoredBytes() const {
  uint64_t total = 0;
  for (const StreamInfo& s : streams) total += s.stored_bytes;
  if (chunk_index) total += chunk_index->new_stored_bytes;
  return total;
}

std::string ManifestToJson(const Manifest& m) {
  return Dump(ToJsonObject(m), kManifestIndent) + "\n";
}

Result<Manifest> ParseManifest(std::string_view text) {
  Result<json> parsed = ParseBoundedJson(text);
  if (!parsed.has_value()) return std::move(parsed).error().WithContext("manifest");
  const json& obj = *parsed;
  if (!obj.is_object()) return InvalidArgumentError("manifest is not a JSON object");
  Manifest m;
  CEDANA_RETURN_IF_ERROR(ParseFields(obj, &m));
  return m;
}

void SignManifest(Manifest* m, std::string_view key) { m->mac = HmacSha256Hex(key, MacInput(*m)); }

Status VerifyManifest(const Manifest& m, std::string_view key) {
  if (m.mac.empty() || !ConstantTimeEquals(m.mac, HmacSha256Hex(key, MacInput(m)))) {
    return PermissionDeniedError(fmt::format(
        "manifest MAC mismatch: checkpoint {} was not produced by this cluster or was altered",
        m.id));
  }
  return OkStatus();
}

Result<std::string> ReadClusterKey(const std::string& path) {
  CEDANA_ASSIGN_OR_RETURN(std::string key, fs::ReadFile(path));
  while (!key.empty() && (key.back() == '\n' || key.back() == ' ')) key.pop_back();
  if (key.size() < 32) return FailedPreconditionError("cluster key " + path + " is too short");
  return key;
}

}  // namespace cedana::image
