// Content-defined chunking of CRIU's memory pages, for deduplicated checkpoints
// (docs/storage.md, *Deduplicated checkpoints*). A chunk ends after a page whose fingerprint
// matches a pattern, so its ends depend on the pages' contents and not on their offsets: when a
// mapping grows or shrinks early in a pages image, the chunks after it keep their contents
// (and digests) instead of all shifting. Chunks are whole pages except at the end of the data.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cedana::image {

inline constexpr size_t kChunkPageBytes = 4096;
inline constexpr size_t kMinChunkBytes = 256 << 10;
inline constexpr size_t kMaxChunkBytes = 4 << 20;
// One page in kChunkCutOdds past the minimum ends a chunk: 1 MiB chunks on average.
inline constexpr uint64_t kChunkCutOdds = 192;
// Images are chunked in regions of this size, each on its own (a chunk ends where a region
// does), so that the pack's threads share a large image and each holds one region at a time.
inline constexpr size_t kChunkRegionBytes = 16 << 20;

// A fingerprint of one page from eight of its words: cheap (the digest covers every byte), and
// equal for equal pages wherever they are.
uint64_t PageFingerprint(const unsigned char* page);

// The lengths of the chunks `data` is cut into, in order; they add up to `size`. Every chunk is
// kMinChunkBytes..kMaxChunkBytes except the last, which may be shorter.
std::vector<size_t> ChunkLengths(const unsigned char* data, size_t size);

}  // namespace cedana::image
