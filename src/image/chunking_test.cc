#include "image/chunking.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "image/bytes_for_test.h"
#include "image/checksum.h"

namespace cedana::image {
namespace {

using testing::RandomBytes;

std::vector<std::string> ChunkDigests(const std::string& data) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t n : ChunkLengths(reinterpret_cast<const unsigned char*>(data.data()), data.size())) {
    out.push_back(Sha256Hex(std::string_view(data).substr(at, n)));
    at += n;
  }
  return out;
}

TEST(ChunkingTest, ChunksCoverTheDataWithinTheirBounds) {
  std::string data = RandomBytes(40 << 20, 1) + "a partial page at the end";
  auto lengths = ChunkLengths(reinterpret_cast<const unsigned char*>(data.data()), data.size());
  ASSERT_GT(lengths.size(), 20u);
  size_t total = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    total += lengths[i];
    EXPECT_LE(lengths[i], kMaxChunkBytes) << "chunk " << i;
    if (i + 1 < lengths.size()) {
      EXPECT_GE(lengths[i], kMinChunkBytes) << "chunk " << i;
      EXPECT_EQ(lengths[i] % kChunkPageBytes, 0u) << "chunk " << i;
    }
  }
  EXPECT_EQ(total, data.size());
  // About 1 MiB on average.
  double average = static_cast<double>(total) / lengths.size();
  EXPECT_GT(average, 0.5 * (1 << 20));
  EXPECT_LT(average, 2.0 * (1 << 20));
}

TEST(ChunkingTest, APageInsertedEarlyKeepsTheLaterChunks) {
  std::string data = RandomBytes(32 << 20, 2);
  std::string shifted = data.substr(0, 8192) + RandomBytes(kChunkPageBytes, 3) + data.substr(8192);
  auto before = ChunkDigests(data);
  auto after = ChunkDigests(shifted);
  std::set<std::string> old(before.begin(), before.end());
  size_t shared = 0;
  for (const std::string& d : after) shared += old.count(d);
  // Only the chunk with the new page changes.
  EXPECT_GE(shared + 1, before.size());
}

TEST(ChunkingTest, ZeroPagesMakeMinimumChunksOfOneDigest) {
  std::string zeros(8 << 20, '\0');
  auto digests = ChunkDigests(zeros);
  EXPECT_EQ(digests.size(), zeros.size() / kMinChunkBytes);
  EXPECT_EQ(std::set<std::string>(digests.begin(), digests.end()).size(), 1u);
}

TEST(ChunkingTest, LessThanAPageIsOneChunk) {
  std::string data = "tiny";
  auto lengths = ChunkLengths(reinterpret_cast<const unsigned char*>(data.data()), data.size());
  ASSERT_EQ(lengths.size(), 1u);
  EXPECT_EQ(lengths[0], 4u);
  EXPECT_TRUE(ChunkLengths(nullptr, 0).empty());
}

}  // namespace
}  // namespace cedana::image
