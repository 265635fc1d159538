#include "image/compressibility.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using storage::testing::TempDir;
using testing::CompressibleBytes;
using testing::RandomBytes;

class CompressibilityTest : public ::testing::Test {
 protected:
  ByteRange File(const std::string& name, const std::string& data) {
    std::string path = tmp_.Sub(name);
    EXPECT_TRUE(fs::WriteFileAtomic(path, data, 0600).ok());
    return {path, 0, data.size()};
  }
  TempDir tmp_;
};

TEST_F(CompressibilityTest, RandomDataIsNotWorthCompressingWithAnyCodec) {
  ByteRange pages = File("pages-1.img", RandomBytes(4 << 20, 1));
  for (Codec codec : {Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    auto v = JudgeCompressibility(codec, 1, {pages});
    ASSERT_TRUE(v.has_value()) << v.error().ToString();
    EXPECT_FALSE(v->compress) << CodecName(codec);
    EXPECT_EQ(v->sampled_bytes, 1u << 20) << CodecName(codec);  // four samples of 256 KiB
    EXPECT_GE(v->compressed_bytes, v->sampled_bytes * 9 / 10) << CodecName(codec);
  }
}

TEST_F(CompressibilityTest, TextIsWorthCompressing) {
  ByteRange pages = File("pages-1.img", CompressibleBytes(4 << 20));
  auto v = JudgeCompressibility(Codec::kLz4, 1, {pages});
  ASSERT_TRUE(v.has_value()) << v.error().ToString();
  EXPECT_TRUE(v->compress);
  EXPECT_LT(v->compressed_bytes, v->sampled_bytes / 2);
}

TEST_F(CompressibilityTest, NoneIsNeverCompressedAndTooLittleIsCompressedAsAsked) {
  ByteRange pages = File("pages-1.img", CompressibleBytes(4 << 20));
  auto none = JudgeCompressibility(Codec::kNone, 1, {pages});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->compress);

  ByteRange small = File("core-1.img", RandomBytes(100 << 10, 2));
  auto v = JudgeCompressibility(Codec::kZstd, 1, {small});
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->compress);
  EXPECT_EQ(v->sampled_bytes, 0u);
}

// The samples are spread over every range, parts of files included: one text range and three
// random ones make a stream that still saves a quarter, and is compressed.
TEST_F(CompressibilityTest, SamplesSpreadOverEveryRange) {
  std::string random = RandomBytes(4 << 20, 3);
  ByteRange text = File("pagemap-1.img", CompressibleBytes(1 << 20));
  ByteRange part = File("pages-1.img", random);
  part.offset = 1 << 20;
  part.length = 3 << 20;
  auto mixed = JudgeCompressibility(Codec::kLz4, 1, {text, part});
  ASSERT_TRUE(mixed.has_value()) << mixed.error().ToString();
  EXPECT_TRUE(mixed->compress);
  EXPECT_EQ(mixed->sampled_bytes, 1u << 20);

  auto random_only = JudgeCompressibility(Codec::kLz4, 1, {part});
  ASSERT_TRUE(random_only.has_value());
  EXPECT_FALSE(random_only->compress);
}

// A stream's head holds CRIU's small images, which compress well; they must not decide for the
// memory after them.
TEST_F(CompressibilityTest, ASmallCompressibleHeadDoesNotDecideForTheMemory) {
  ByteRange head = File("mm-1.img", CompressibleBytes(200 << 10));
  ByteRange pages = File("pages-1.img", RandomBytes(16 << 20, 4));
  auto v = JudgeCompressibility(Codec::kLz4, 1, {head, pages});
  ASSERT_TRUE(v.has_value()) << v.error().ToString();
  EXPECT_FALSE(v->compress) << v->compressed_bytes << " of " << v->sampled_bytes;
}

TEST_F(CompressibilityTest, AnUnreadableFileIsAnErrorNamingIt) {
  ByteRange gone{tmp_.Sub("pages-9.img"), 0, 1 << 20};
  auto v = JudgeCompressibility(Codec::kLz4, 1, {gone});
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message().find("pages-9.img"), std::string::npos) << v.error().ToString();
}

}  // namespace
}  // namespace cedana::image
