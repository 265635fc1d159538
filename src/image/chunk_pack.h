// PackChunks: the memory pages of a deduplicated checkpoint into its label's chunks
// (docs/storage.md, *Deduplicated checkpoints*). Each pages image is cut into content-defined
// chunks (image/chunking.h), each named by its SHA-256; only the chunks the label's store does
// not hold yet are compressed and stored, so a checkpoint whose memory changed by a tenth since
// the label's last one stores about a tenth of it. Thread-safe function.
#pragma once

#include <atomic>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "image/chunk_index.h"
#include "image/codec.h"
#include "image/stream_taps.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

struct ChunkPackOptions {
  int threads = 1;
  Codec codec = Codec::kNone;  // a pages image whose samples do not compress is stored raw
  int level = 1;
};

// Chunks `pages_files` (names in `images_dir`), stores the new chunks, writes the chunk index
// beside ref's streams and then checks that every chunk it names is in the store: one that a
// sweep (RemoveCheckpoint of another checkpoint of the label) removed meanwhile is stored again.
// Returns what the manifest records of the index. On failure the caller deletes ref (its new
// chunks go with the sweep that follows).
Result<ChunkIndexInfo> PackChunks(const std::string& images_dir,
                                  const std::vector<std::string>& pages_files,
                                  storage::CheckpointStore& store,
                                  const storage::CheckpointRef& ref,
                                  const ChunkPackOptions& options, ProgressReporter* progress,
                                  const std::atomic<bool>* cancel);

// Writes `index` beside ref's streams as chunks.json. Returns what the manifest records of it,
// but for the new_* counts, which only the pack knows. kFailedPrecondition when the index is
// larger than a checkpoint's file may be.
Result<ChunkIndexInfo> WriteChunkIndex(storage::CheckpointStore& store,
                                       const storage::CheckpointRef& ref, const ChunkIndex& index);

// The digests `index` names that the label's chunks do not hold now.
Result<std::unordered_set<std::string>> MissingChunks(storage::CheckpointStore& store,
                                                      const storage::CheckpointRef& ref,
                                                      const ChunkIndex& index);

}  // namespace cedana::image
