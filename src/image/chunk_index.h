// ChunkIndex: how a deduplicated checkpoint's memory pages are stored (docs/storage.md,
// *Deduplicated checkpoints*): each pages image as the list of its chunks, each named by the
// digest of its bytes (the manifest's Digest: BLAKE3, SHA-256 before it) and stored once in the
// label's chunks (storage::ChunkRef). It is written beside the streams as chunks.json before the
// commit; the signed manifest holds its size and SHA-256 (ChunkIndexInfo), so a restore trusts
// every digest in it and verifies every chunk against its digest. Value type.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cedana::image {

inline constexpr char kChunkIndexName[] = "chunks.json";

struct ChunkEntry {
  std::string digest;      // hex digest of the chunk's bytes (its name)
  uint64_t raw_bytes = 0;  // its length in the image
};

// One pages image: its chunks, in order, add up to its size.
struct ChunkedFile {
  std::string name;  // pages-<id>.img
  uint64_t size = 0;
  std::vector<ChunkEntry> chunks;
};

struct ChunkIndex {
  std::vector<ChunkedFile> files;

  // Every digest named, once.
  std::set<std::string> Digests() const;
};

// What the manifest records of a checkpoint's chunk index.
struct ChunkIndexInfo {
  uint64_t bytes = 0;             // size of chunks.json
  std::string sha256;             // of chunks.json
  uint64_t chunks = 0;            // chunk entries in it (a chunk named twice counts twice)
  uint64_t raw_bytes = 0;         // bytes of the pages images it describes
  uint64_t new_chunks = 0;        // chunks this checkpoint stored (the rest were there before)
  uint64_t new_stored_bytes = 0;  // their bytes as stored
};

std::string ChunkIndexToJson(const ChunkIndex& index);
// kInvalidArgument naming what is wrong: a file name that is not a pages image, a digest that is
// not 64 lowercase hex digits, a chunk of 0 or more than kMaxChunkBytes bytes, chunks that do not
// add up to their file's size.
Result<ChunkIndex> ParseChunkIndex(std::string_view json);

}  // namespace cedana::image
