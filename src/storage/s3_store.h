// S3Store: a CheckpointStore in an S3 bucket (AWS or any S3-compatible store), same layout as
// the local store under the location's prefix: <prefix>/<owner>/<label>/<id>/{manifest.json,
// stream-N}. Streams are multipart uploads fed part by part while the next part is being
// filled, and are read back with ranged GETs, one range ahead; their part buffers share the
// store's `stream_memory` (storage/part_budget.h). manifest.json is a single PUT
// after every stream completed: a checkpoint whose upload failed has no manifest, is never
// listed and never restored; its parts are aborted and its objects deleted by the caller.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/checkpoint_store.h"
#include "storage/part_budget.h"
#include "storage/s3_client.h"
#include "storage/s3_protocol.h"

namespace cedana::storage {

class S3Store : public CheckpointStore {
 public:
  S3Store(s3::Location location, std::shared_ptr<s3::Client> client, uint64_t stream_memory);

  std::string Describe() const override { return location_.Describe(); }
  // Writes and deletes a probe object: proves bucket, credentials and permissions at once.
  Status CheckWritable(const std::string& owner) override;

  Result<std::unique_ptr<ByteSink>> CreateStream(const CheckpointRef& ref, int index) override;
  uint64_t StreamMemoryLimit() const override;
  uint64_t StreamMemoryPeak() const override;
  Status Commit(const CheckpointRef& ref, const std::string& manifest_json) override;
  // The manifest first (so a crash part-way leaves an uncommitted checkpoint), then the rest.
  Status Delete(const CheckpointRef& ref) override;

  Result<std::unique_ptr<ByteSource>> OpenStream(const CheckpointRef& ref, int index) override;
  Result<std::string> ReadManifest(const CheckpointRef& ref) override;
  Status WriteLineage(const std::string& owner, const std::string& label,
                      const std::string& json) override;
  Result<std::string> ReadLineage(const std::string& owner, const std::string& label) override;
  Status WriteFile(const CheckpointRef& ref, const std::string& name,
                   std::string_view data) override;
  Result<std::string> ReadFile(const CheckpointRef& ref, const std::string& name,
                               size_t max_bytes) override;
  // A chunk is one PUT, durable and visible when it returns; Publish has nothing left to do.
  Result<std::unique_ptr<ChunkWriter>> WriteChunks(const std::string& owner,
                                                   const std::string& label) override;
  Status ReadChunk(const ChunkRef& chunk, size_t max_bytes, std::string* into) override;
  Result<std::vector<std::string>> ListChunks(const std::string& owner,
                                              const std::string& label) override;
  Status DeleteChunk(const ChunkRef& chunk) override;
  Result<std::vector<CheckpointRef>> List(const std::optional<std::string>& owner,
                                          const std::optional<std::string>& label) override;
  Result<std::vector<CheckpointRef>> ListUncommitted() override;

 private:
  std::string KeyOf(const CheckpointRef& ref, const std::string& name) const;
  std::string ChunksPrefix(const std::string& owner, const std::string& label) const;

  const s3::Location location_;
  const std::shared_ptr<s3::Client> client_;
  const std::shared_ptr<PartBudget> parts_;  // shared by every stream opened here
};

}  // namespace cedana::storage
