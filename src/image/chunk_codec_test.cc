#include "image/chunk_codec.h"

#include <gtest/gtest.h>

#include "image/bytes_for_test.h"

namespace cedana::image {
namespace {

using testing::CompressibleBytes;
using testing::RandomBytes;

TEST(ChunkCodecTest, EveryCodecRoundTrips) {
  const std::string raw = CompressibleBytes(1 << 20);
  std::string decoded;
  for (Codec codec : {Codec::kNone, Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    auto stored = EncodeChunk(raw, codec, 1);
    ASSERT_TRUE(stored.has_value()) << CodecName(codec);
    if (codec != Codec::kNone) {
      EXPECT_LT(stored->size(), raw.size() / 2) << CodecName(codec);
    }
    EXPECT_LE(stored->size(), MaxStoredChunkBytes(raw.size()));
    auto back = DecodeChunk(*stored, raw.size(), &decoded);
    ASSERT_TRUE(back.has_value()) << CodecName(codec) << ": " << back.error().ToString();
    EXPECT_EQ(*back, raw) << CodecName(codec);
  }
}

TEST(ChunkCodecTest, WhatDoesNotCompressIsStoredAsItIs) {
  const std::string raw = RandomBytes(256 << 10, 7);
  auto stored = EncodeChunk(raw, Codec::kZstd, 1);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->size(), MaxStoredChunkBytes(raw.size()));
  EXPECT_EQ(stored->substr(0, 5), "cdc1n");
  std::string decoded;
  auto back = DecodeChunk(*stored, raw.size(), &decoded);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, raw);
  // Raw bytes are not copied: the view is of the stored chunk itself.
  EXPECT_EQ(back->data(), stored->data() + 5);
  EXPECT_TRUE(decoded.empty());
}

TEST(ChunkCodecTest, OneBufferDecodesChunksOfEverySizeInTurn) {
  std::string decoded;
  for (size_t size : {size_t{1} << 20, size_t{4096}, size_t{3} << 20, size_t{1}}) {
    const std::string raw = CompressibleBytes(size);
    auto stored = EncodeChunk(raw, Codec::kZstd, 1).value();
    auto back = DecodeChunk(stored, raw.size(), &decoded);
    ASSERT_TRUE(back.has_value()) << size << ": " << back.error().ToString();
    EXPECT_EQ(*back, raw) << size;
  }
}

TEST(ChunkCodecTest, RefusesWhatIsNotAChunkOrIsLongerThanPromised) {
  const std::string raw = CompressibleBytes(64 << 10);
  auto stored = EncodeChunk(raw, Codec::kLz4, 1).value();
  std::string d;
  EXPECT_EQ(DecodeChunk("xyz", 3, &d).error().code(), Code::kAborted);
  EXPECT_EQ(DecodeChunk("cdc1q" + raw, raw.size(), &d).error().code(), Code::kAborted);
  // A chunk that decodes longer than its index entry says is refused, compressed or not.
  EXPECT_EQ(DecodeChunk(stored, raw.size() - 1, &d).error().code(), Code::kAborted);
  EXPECT_EQ(DecodeChunk("cdc1n" + raw, raw.size() - 1, &d).error().code(), Code::kAborted);
  std::string corrupt = stored;
  corrupt[corrupt.size() / 2] ^= 0x5a;
  auto decoded = DecodeChunk(corrupt, raw.size(), &d);
  EXPECT_TRUE(!decoded.has_value() || *decoded != raw);
}

}  // namespace
}  // namespace cedana::image
