// CheckpointStore: where checkpoints live (docs/storage.md). Layout under the checkpoint dir:
//   <owner>/<label>/<checkpoint-id>/{manifest.json, stream-0 .. stream-N-1}
// A checkpoint is committed when its manifest.json exists; the manifest is written last and
// atomically, so a reader never sees a half-written checkpoint as committed. Storage is the
// source of truth: "the newest good checkpoint of a label" is answered from it alone.
// Implementations are thread-safe (streams of one checkpoint are written in parallel).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "storage/byte_io.h"

namespace cedana::storage {

// Names one checkpoint in the store.
struct CheckpointRef {
  std::string owner;  // user name of the owner (directory level 1)
  std::string label;  // CEDANA_CHECKPOINT label (directory level 2)
  std::string id;     // checkpoint id, sortable by creation time (directory level 3)
  std::string Path() const { return owner + "/" + label + "/" + id; }
};

// Names inside a checkpoint: the manifest (the commit point) and the streams.
inline constexpr char kManifestName[] = "manifest.json";
// Beside a label's checkpoint dirs: how the label's last run ended (image/lineage.h).
inline constexpr char kLineageName[] = "lineage.json";
// A manifest is a few KiB; storage a user can write may hold anything under that name.
inline constexpr size_t kMaxManifestBytes = 1 << 20;
std::string StreamName(int index);  // "stream-<index>"

// A content-addressed chunk of a label's deduplicated checkpoints (image/chunk_index.h), stored
// once for all of them under <owner>/<label>/.chunks/<digest>: its name is the hex SHA-256 of
// its contents (before compression). The leading dot keeps it out of every checkpoint listing;
// no checkpoint id may begin with one.
inline constexpr char kChunksDirName[] = ".chunks";
struct ChunkRef {
  std::string owner;
  std::string label;
  std::string digest;  // 64 lowercase hex digits
};
// A checkpoint's own file beside its streams (the chunk index), at most this large.
inline constexpr size_t kMaxCheckpointFileBytes = 64 << 20;

// kInvalidArgument unless owner, label and id are each one safe path component: refs come from
// users (labels) and listings, and must never climb out of the store.
Status ValidateRef(const CheckpointRef& ref);
// The same check of one component; `what` names it in the message.
Status ValidateComponent(std::string_view what, const std::string& value);
// kInvalidArgument unless owner and label are safe components and digest is 64 lowercase hex.
Status ValidateChunk(const ChunkRef& chunk);
bool IsChunkDigest(std::string_view name);

// Writes chunks of one owner/label. A chunk is listed (ListChunks) and read (ReadChunk) only once
// Publish returned: after a crash a store never holds a chunk, under its digest, whose bytes are
// not all durable. Put is thread-safe (the pack's threads share one writer).
class ChunkWriter {
 public:
  virtual ~ChunkWriter() = default;
  // Stores `bytes` (the chunk as encoded: image/chunk_codec.h) under `digest`.
  virtual Status Put(const std::string& digest, std::string_view bytes) = 0;
  // Makes every Put durable and visible under its digest.
  virtual Status Publish() = 0;
};

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;

  // "/var/lib/cedana/checkpoints" or "s3://bucket/prefix": for messages.
  virtual std::string Describe() const = 0;

  // Checks the store is usable for writing `owner`'s checkpoints (exists/creatable, writable).
  // kPermissionDenied, kNotFound or kUnavailable with the reason.
  virtual Status CheckWritable(const std::string& owner) = 0;

  // Opens stream `index` of a checkpoint that is not committed yet.
  virtual Result<std::unique_ptr<ByteSink>> CreateStream(const CheckpointRef& ref, int index) = 0;
  // The memory that the buffers of every stream opened here (written or read) hold at most at
  // once, and the most they held so far: an S3 store's part buffers. 0 for a local dir, whose
  // streams go through the page cache.
  virtual uint64_t StreamMemoryLimit() const = 0;
  virtual uint64_t StreamMemoryPeak() const = 0;
  // Writes manifest.json: the commit point. Call only after every stream's sink was Closed.
  virtual Status Commit(const CheckpointRef& ref, const std::string& manifest_json) = 0;
  // Removes whatever was written for `ref` (committed or not). Missing is fine.
  virtual Status Delete(const CheckpointRef& ref) = 0;

  virtual Result<std::unique_ptr<ByteSource>> OpenStream(const CheckpointRef& ref, int index) = 0;
  // kNotFound when the checkpoint is not committed; kInvalidArgument when the manifest is larger
  // than kMaxManifestBytes, not a regular file, or reached through a symlink (local stores:
  // none of owner, label, id and the file itself may be one). Never reads more than the limit.
  virtual Result<std::string> ReadManifest(const CheckpointRef& ref) = 0;

  // A label's lineage record (kLineageName), replaced whole. Read with ReadManifest's bounds and
  // symlink rules; kNotFound when there is none.
  virtual Status WriteLineage(const std::string& owner, const std::string& label,
                              const std::string& json) = 0;
  virtual Result<std::string> ReadLineage(const std::string& owner, const std::string& label) = 0;

  // A file of a checkpoint that is not committed yet, beside its streams (written whole; `name`
  // is one path component). ReadFile: kNotFound when it is not there; never more than
  // `max_bytes`, with ReadManifest's symlink rules.
  virtual Status WriteFile(const CheckpointRef& ref, const std::string& name,
                           std::string_view data) = 0;
  virtual Result<std::string> ReadFile(const CheckpointRef& ref, const std::string& name,
                                       size_t max_bytes) = 0;

  // The label's chunks (ChunkRef). ReadChunk: the stored bytes into `*into`, whose memory is
  // reused where the store can (a restore reads thousands of chunks into a few buffers);
  // kNotFound when missing, kInvalidArgument past `max_bytes`. ListChunks: the digests
  // stored, in no order (an empty list when none are). DeleteChunk: missing is fine.
  virtual Result<std::unique_ptr<ChunkWriter>> WriteChunks(const std::string& owner,
                                                           const std::string& label) = 0;
  virtual Status ReadChunk(const ChunkRef& chunk, size_t max_bytes, std::string* into) = 0;
  // The stored chunk as a read-only open file, when the store keeps chunks in local files
  // (nullopt otherwise), resolved as ReadChunk resolves it; kNotFound when missing.
  virtual Result<std::optional<UniqueFd>> OpenChunk(const ChunkRef& chunk) {
    (void)chunk;
    return std::optional<UniqueFd>();
  }
  virtual Result<std::vector<std::string>> ListChunks(const std::string& owner,
                                                      const std::string& label) = 0;
  virtual Status DeleteChunk(const ChunkRef& chunk) = 0;

  // Committed checkpoints, optionally only of one owner and/or label, in no particular order.
  virtual Result<std::vector<CheckpointRef>> List(const std::optional<std::string>& owner,
                                                  const std::optional<std::string>& label) = 0;
  // Checkpoints begun and never committed (something stored, no manifest), of every owner: dumps
  // in progress, and dumps abandoned by a node that died (daemon/abandoned_checkpoints.h).
  virtual Result<std::vector<CheckpointRef>> ListUncommitted() = 0;
};

// Opens the store a checkpoint dir names: a local path (also NFS) or s3://bucket/prefix (with
// `s3_config`). The buffers of the streams opened through one store share `stream_memory` (at
// least one S3 part; see StreamMemoryLimit). kInvalidArgument for a malformed location or S3
// settings that cannot work.
Result<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& location,
                                                   const S3Config& s3_config,
                                                   uint64_t stream_memory);
// Whether a checkpoint dir location names an S3 bucket ("s3://..."), whose streams buffer parts.
bool IsS3Location(std::string_view location);

// For a dump's or restore's log line: ", stream buffers peak P of L MiB" when the store buffers
// its streams (StreamMemoryLimit), else "".
std::string StreamMemoryNote(const CheckpointStore& store);

// OpenStore's `stream_memory` for a caller that opens no streams (it lists, reads manifests and
// deletes): a stream opened anyway gets one part at a time.
inline constexpr uint64_t kNoStreamMemory = 0;

}  // namespace cedana::storage
