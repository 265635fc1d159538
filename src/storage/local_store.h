// LocalStore: a CheckpointStore over a directory on a local or network (NFS) file system.
// Layout: <root>/<owner>/<label>/<id>/{manifest.json, stream-0 ..}. Stream sinks write plain
// files and fsync them on Close(); manifest.json is written atomically (temp file + rename), so
// it appears whole or not at all. Thread-safe: the object holds only the root path, and each
// sink/source is used by one thread.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/checkpoint_store.h"

namespace cedana::storage {

class LocalStore : public CheckpointStore {
 public:
  // `root` must be an absolute path; it need not exist yet (CheckWritable creates it).
  explicit LocalStore(std::string root);

  std::string Describe() const override { return root_; }
  // Creates root (mkdir -p) and proves it writable with a temporary file. kPermissionDenied or
  // kNotFound with a message naming the directory.
  Status CheckWritable(const std::string& owner) override;

  // Creates the checkpoint dir as needed and truncates any stream file already there. The
  // sink's destructor removes nothing: after a failure the caller Deletes the ref.
  Result<std::unique_ptr<ByteSink>> CreateStream(const CheckpointRef& ref, int index) override;
  uint64_t StreamMemoryLimit() const override { return 0; }
  uint64_t StreamMemoryPeak() const override { return 0; }
  Status Commit(const CheckpointRef& ref, const std::string& manifest_json) override;
  // Removes the checkpoint dir, then the label and owner dirs if they became empty.
  Status Delete(const CheckpointRef& ref) override;

  // kNotFound when the stream file does not exist.
  Result<std::unique_ptr<ByteSource>> OpenStream(const CheckpointRef& ref, int index) override;
  Result<std::string> ReadManifest(const CheckpointRef& ref) override;
  Status WriteLineage(const std::string& owner, const std::string& label,
                      const std::string& json) override;
  Result<std::string> ReadLineage(const std::string& owner, const std::string& label) override;
  Status WriteFile(const CheckpointRef& ref, const std::string& name,
                   std::string_view data) override;
  Result<std::string> ReadFile(const CheckpointRef& ref, const std::string& name,
                               size_t max_bytes) override;
  // Chunks are written under temporary names and fsynced all at once (one syncfs) when
  // published, then renamed to their digests: one sync per checkpoint, not one per chunk.
  Result<std::unique_ptr<ChunkWriter>> WriteChunks(const std::string& owner,
                                                   const std::string& label) override;
  Status ReadChunk(const ChunkRef& chunk, size_t max_bytes, std::string* into) override;
  Result<std::optional<UniqueFd>> OpenChunk(const ChunkRef& chunk) override;
  Result<std::vector<std::string>> ListChunks(const std::string& owner,
                                              const std::string& label) override;
  // Removes the chunk, then the chunks, label and owner dirs if they became empty.
  Status DeleteChunk(const ChunkRef& chunk) override;
  // Checkpoint dirs holding a manifest.json; dirs without one (in progress, or abandoned by a
  // crash) are skipped. A missing root or owner/label dir yields an empty list.
  Result<std::vector<CheckpointRef>> List(const std::optional<std::string>& owner,
                                          const std::optional<std::string>& label) override;
  Result<std::vector<CheckpointRef>> ListUncommitted() override;

  // <root>/<owner>/<label>/<id>; for tests and messages.
  std::string CheckpointDir(const CheckpointRef& ref) const;

 private:
  Result<UniqueFd> OpenBelowRoot(const std::string& rel, struct stat* st) const;
  static std::string ChunkPath(const ChunkRef& chunk);
  // `what` names the file's kind in the error when it is larger than `max_bytes`.
  Result<std::string> ReadSmallFile(const std::string& rel, std::string_view what,
                                    size_t max_bytes = kMaxManifestBytes) const;
  // The same into `*into`, reusing its memory.
  Status ReadSmallFileInto(const std::string& rel, std::string_view what, size_t max_bytes,
                           std::string* into) const;
  std::string ChunksDir(const std::string& owner, const std::string& label) const;
  // The checkpoint dirs under owner/label (all when not given) that do (committed) or do not
  // hold a manifest.json.
  Result<std::vector<CheckpointRef>> Walk(const std::optional<std::string>& owner,
                                          const std::optional<std::string>& label, bool committed);

  std::string root_;
};

}  // namespace cedana::storage
