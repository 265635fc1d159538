// Manifest: the record of one committed checkpoint (manifest.json, docs/storage.md). Written last;
// its presence commits the checkpoint. It carries a MAC keyed with the cluster key (readable
// by root only), so a privileged restore refuses images it did not produce. Value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "image/checksum.h"
#include "image/chunk_index.h"
#include "image/codec.h"

namespace cedana::image {

// What this build writes: the field `digest` names the streams' and chunks' digest (Digest), and a
// deduplicated checkpoint has a chunk_index. A build that reads only versions 1 and 2 refuses
// it by its version instead of by a missing field.
inline constexpr int kManifestFormatVersion = 3;
// Read only: SHA-256 streams without (1) and with (2) a chunk_index. Version 2 kept a build that
// read only version 1 from restoring a deduplicated checkpoint without its memory pages.
inline constexpr int kSha256ManifestFormatVersion = 1;
inline constexpr int kSha256DedupManifestFormatVersion = 2;

// The head of a stream: its leading raw (tar) bytes, which hold every image but the memory
// pages (written last), hashed on their own so that a direct restore can verify them before
// CRIU starts. Empty digest: a checkpoint without one (made before heads, or a direct dump,
// whose order is CRIU's).
struct StreamHead {
  uint64_t raw_bytes = 0;
  std::string digest;  // hex digest (Manifest::digest) of the head's raw bytes
};

struct StreamInfo {
  std::string name;           // "stream-0"
  uint64_t raw_bytes = 0;     // bytes before compression (the tar archive)
  uint64_t stored_bytes = 0;  // bytes as stored
  std::string digest;         // hex digest (Manifest::digest) of the stored bytes
  StreamHead head;
  // Stored without compression although the manifest names a codec: its samples did not
  // compress (image/compressibility.h). Written only when true.
  bool stored_raw = false;
};

struct Manifest {
  int format_version = kManifestFormatVersion;
  std::string id;
  std::string label;
  std::string owner;  // user name
  uint32_t owner_uid = 0;
  uint32_t owner_gid = 0;
  std::string workload_id;    // the daemon's workload id, if any
  std::string job_id;         // SLURM job id, if any
  std::string node;           // host name where it was taken
  int64_t created_at_ms = 0;  // Unix time, milliseconds
  int64_t duration_ms = 0;    // dump start to commit
  // Why it was taken (common/checkpoint_reason.h); "" in manifests made before reasons, which
  // then have none of the three fields below either.
  std::string reason;
  uint32_t restart_count = 0;  // the SLURM job's restarts (requeues) when it was taken
  int64_t frozen_ms = 0;       // how long the job's processes were stopped for it
  std::string criu_version;
  std::string kernel;
  Codec codec = Codec::kNone;  // the codec asked for; each stream says how it is stored
  Digest digest = kNewDigest;  // of the streams, their heads and the chunks
  std::vector<StreamInfo> streams;
  uint64_t images_bytes = 0;  // size of CRIU's images dir
  // Deduplicated: the pages images are in the label's chunks, not in the streams.
  std::optional<ChunkIndexInfo> chunk_index;
  // What a restore needs besides the images (argv, cwd, pipe inodes, ...), owned by the daemon.
  nlohmann::json workload = nlohmann::json::object();
  std::string mac;  // hex HMAC-SHA256 over the manifest without this field

  // What this checkpoint added to the store: its streams and the chunks it was first to store.
  uint64_t StoredBytes() const;
  // How `stream` (one of `streams`) is stored.
  Codec CodecOf(const StreamInfo& stream) const { return stream.stored_raw ? Codec::kNone : codec; }
};

std::string ManifestToJson(const Manifest& m);
// kInvalidArgument (naming the field) for malformed or unsupported-version manifests.
Result<Manifest> ParseManifest(std::string_view json);

// Sets m->mac from the key. Verify: kPermissionDenied when the MAC does not match.
void SignManifest(Manifest* m, std::string_view key);
// The cluster key in `path` (trailing newline dropped). kFailedPrecondition when it is shorter
// than 32 characters; the file's errors otherwise (kNotFound, kPermissionDenied).
Result<std::string> ReadClusterKey(const std::string& path);
Status VerifyManifest(const Manifest& m, std::string_view key);

}  // namespace cedana::image
