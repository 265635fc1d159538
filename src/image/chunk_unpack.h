// UnpackChunks: a deduplicated checkpoint's memory pages back from its label's chunks into
// CRIU's images dir. The chunk index is checked against the signed manifest, then every chunk
// against its digest as it arrives: CRIU never sees a byte that was not verified. Thread-safe
// function.
#pragma once

#include <atomic>
#include <string>

#include "common/result.h"
#include "image/chunk_index.h"
#include "image/manifest.h"
#include "image/stream_taps.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

// The checkpoint's chunks.json, checked against what its signed manifest records of it (`want`).
// kAborted "chunk index of <ref>: checksum mismatch" when it differs.
Result<ChunkIndex> ReadVerifiedIndex(storage::CheckpointStore& store,
                                     const storage::CheckpointRef& ref, const ChunkIndexInfo& want);

// Where ReadVerifiedChunk reads a chunk, kept from chunk to chunk: a restore reads thousands of
// chunks into a few of these.
struct ChunkBuffer {
  std::string stored;   // the chunk as stored
  std::string decoded;  // its bytes, when it was stored compressed
};

// One chunk of ref's label, decoded and checked against its name: the hex of its bytes'
// `algorithm` digest (the manifest's). The view is into `buffer`, valid until its next use.
// kAborted "chunk <digest> of label <label>: checksum mismatch (...)" for an altered chunk,
// the store's kNotFound naming it for a missing one.
Result<std::string_view> ReadVerifiedChunk(storage::CheckpointStore& store,
                                           const storage::CheckpointRef& ref,
                                           const ChunkEntry& chunk, Digest algorithm,
                                           ChunkBuffer* buffer);

// The same check of a chunk already read into `buffer->stored`.
Result<std::string_view> VerifyStoredChunk(const storage::CheckpointRef& ref,
                                           const ChunkEntry& chunk, Digest algorithm,
                                           ChunkBuffer* buffer);

// Writes every pages image of `manifest`'s chunk index into `images_dir` with `threads`
// threads. kAborted "chunk <digest> of <label>: checksum mismatch" for an altered chunk, the
// store's kNotFound for a missing one, kAborted for an index that is not the signed one.
Status UnpackChunks(storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                    const Manifest& manifest, const std::string& images_dir, int threads,
                    ProgressReporter* progress, const std::atomic<bool>* cancel);

}  // namespace cedana::image
