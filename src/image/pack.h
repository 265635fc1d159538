// Pack / Unpack: CRIU's images dir <-> N compressed streams in a checkpoint store.
// Files are spread over the streams by size (largest first onto the least-filled stream); in
// each stream the memory pages (pages-*.img) come last, after its head (StreamHead); each
// stream is a POSIX tar archive, so `gzip -d <stream-0 | tar -x` works by hand for gzip. Streams
// are processed in parallel, one thread each. Thread-safe functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "image/codec.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

// Called from worker threads with the bytes processed so far and the total (raw bytes).
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

struct PackOptions {
  int streams = 1;  // 1..64
  Codec codec = Codec::kNone;
  int level = 1;        // codec level
  ProgressFn progress;  // optional
  // With 2 or more streams, files larger than this travel as parts of this size spread over
  // the streams (TarPartName), so that one large pages image is compressed and stored by every
  // stream in parallel instead of by one.
  uint64_t part_bytes = 32ull << 20;
  // Deduplicated (image/chunk_pack.h): the pages images go into the label's chunks, with
  // `streams` threads, and the streams hold the other images.
  bool dedup = false;
};

struct PackedImages {
  std::vector<StreamInfo> streams;
  std::optional<ChunkIndexInfo> chunk_index;  // deduplicated
};

// CRIU's memory pages (pages-<id>.img): in every stream after all other images (its head).
bool IsPagesImage(std::string_view name);

// Writes the streams of `ref` (not the manifest), and its chunks when deduplicated. On failure
// nothing is committed; the caller removes `ref` (image/chunk_sweep.h). Returns one StreamInfo
// per stream.
Result<PackedImages> PackImagesDir(const std::string& images_dir, storage::CheckpointStore& store,
                                   const storage::CheckpointRef& ref, const PackOptions& options);

// Reads every stream of `manifest` into `images_dir` (created, must be empty), verifying each
// stream's size and SHA-256, and then the chunks of a deduplicated one (image/chunk_unpack.h).
// kAborted ("stream-1 of <ref>: checksum mismatch") on corruption; the caller removes images_dir on
// error.
Status UnpackToImagesDir(storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                         const Manifest& manifest, const std::string& images_dir,
                         const ProgressFn& progress = {});

}  // namespace cedana::image
