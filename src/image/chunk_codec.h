// A chunk as stored (storage::ChunkRef): a 5-byte header, "cdc" then a format and a codec
// letter, then the chunk's bytes compressed with that codec or, when compressing did not make
// them smaller, as they are. A chunk is stored once and read by every later checkpoint that
// names it, so it says itself how it is stored. Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "image/codec.h"

namespace cedana::image {

// The stored form of `raw` with `codec` at `level`.
Result<std::string> EncodeChunk(std::string_view raw, Codec codec, int level);

// The chunk's bytes back: a view into `stored` for a chunk stored raw, else into `*decoded`'s
// memory (reused from call to call, and only grown: it may be longer than the view). kAborted for a
// header or frame that is not a chunk's, or for more than `raw_bytes` bytes (a restore then never
// holds more than the index promised).
Result<std::string_view> DecodeChunk(std::string_view stored, uint64_t raw_bytes,
                                     std::string* decoded);

// A chunk stored as it is: `header` (the stored chunk's first kChunkHeaderBytes) says so, and
// its bytes follow the header.
inline constexpr size_t kChunkHeaderBytes = 5;
bool StoredRaw(std::string_view header);

// The most a stored chunk of `raw_bytes` may take: the raw bytes and the header (compression
// is dropped when it does not shrink them).
size_t MaxStoredChunkBytes(uint64_t raw_bytes);

}  // namespace cedana::image
