#include "image/chunking.h"

#include <cstring>

namespace cedana::image {
namespace {

// splitmix64's finalizer: spreads every input bit over the result.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t PageFingerprint(const unsigned char* page) {
  uint64_t h = 0;
  for (size_t i = 0; i < 8; ++i) {
    uint64_t word;
    std::memcpy(&word, page + i * (kChunkPageBytes / 8), sizeof word);
    h = Mix(h ^ word);
  }
  return h;
}

std::vector<size_t> ChunkLengths(const unsigned char* data, size_t size) {
  std::vector<size_t> lengths;
  size_t start = 0;
  size_t pos = 0;  // end of the pages looked at so far
  while (pos + kChunkPageBytes <= size) {
    const unsigned char* page = data + pos;
    pos += kChunkPageBytes;
    size_t length = pos - start;
    if (length < kMinChunkBytes) continue;
    if (length >= kMaxChunkBytes || PageFingerprint(page) % kChunkCutOdds == 0) {
      lengths.push_back(length);
      start = pos;
    }
  }
  if (start < size) lengths.push_back(size - start);
  return lengths;
}

}  // namespace cedana::image
