#include "image/codec.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using testing::CompressibleBytes;
using testing::RandomBytes;
using testing::StringSink;
using testing::StringSource;

// Compresses `data`, writing it in pieces of `piece` bytes.
std::string Compress(Codec codec, const std::string& data, size_t piece = 100000, int level = 1) {
  std::string out;
  auto sink = CompressingSink(codec, std::make_unique<StringSink>(&out), level);
  for (size_t off = 0; off < data.size(); off += piece) {
    EXPECT_TRUE(sink->Write(data.data() + off, std::min(piece, data.size() - off)).ok());
  }
  EXPECT_TRUE(sink->Close().ok());
  return out;
}

Result<std::string> Decompress(Codec codec, std::string stored, size_t max_read = SIZE_MAX) {
  auto src =
      DecompressingSource(codec, std::make_unique<StringSource>(std::move(stored), max_read));
  std::string out;
  std::string buf(65536, '\0');
  for (;;) {
    CEDANA_ASSIGN_OR_RETURN(size_t n, src->Read(buf.data(), buf.size()));
    if (n == 0) return out;
    out.append(buf.data(), n);
  }
}

// DecompressInto with room for `capacity` bytes, what it decoded as a string.
Result<std::string> DecompressIntoString(Codec codec, const std::string& stored, size_t capacity) {
  std::string out(capacity, '\0');
  CEDANA_ASSIGN_OR_RETURN(size_t n, DecompressInto(codec, stored, out.data(), capacity));
  if (n > capacity) return InternalError("more bytes than the capacity");
  out.resize(n);
  return out;
}

TEST(ParseCodecTest, Names) {
  const std::pair<const char*, Codec> cases[] = {
      {"none", Codec::kNone}, {"gzip", Codec::kGzip}, {"lz4", Codec::kLz4}, {"zstd", Codec::kZstd}};
  for (const auto& [name, codec] : cases) {
    auto parsed = ParseCodec(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, codec);
    EXPECT_EQ(CodecName(codec), name);
  }
}

TEST(ParseCodecTest, UnknownNamesAllValidCodecs) {
  for (const char* bad : {"bzip2", "", "GZIP", "zstd "}) {
    auto parsed = ParseCodec(bad);
    ASSERT_EQ(parsed.error().code(), Code::kInvalidArgument) << bad;
  }
  const std::string msg = ParseCodec("bzip2").error().message();
  for (const char* name : {"bzip2", "none", "gzip", "lz4", "zstd"}) {
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
}

class CodecTest : public ::testing::TestWithParam<Codec> {};

TEST_P(CodecTest, RoundTrip) {
  const std::string inputs[] = {"", "x", RandomBytes(3 << 20, 1), CompressibleBytes(5 << 20)};
  for (const std::string& data : inputs) {
    std::string stored = Compress(GetParam(), data, 333333);
    auto back = Decompress(GetParam(), stored, 4097);
    ASSERT_TRUE(back.has_value()) << back.error().ToString();
    EXPECT_TRUE(*back == data) << "size " << data.size();
  }
}

TEST_P(CodecTest, CompressesCompressibleData) {
  if (GetParam() == Codec::kNone) GTEST_SKIP();
  std::string data = CompressibleBytes(1 << 20);
  EXPECT_LT(Compress(GetParam(), data).size(), data.size() / 4);
}

TEST_P(CodecTest, ConcatenatedFramesReadAsOne) {
  std::string a = CompressibleBytes(200000);
  std::string b = RandomBytes(70000, 2);
  auto back = Decompress(GetParam(), Compress(GetParam(), a) + Compress(GetParam(), b));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_TRUE(*back == a + b);
}

TEST_P(CodecTest, TruncatedDataIsAborted) {
  if (GetParam() == Codec::kNone) GTEST_SKIP() << "no framing to notice truncation";
  std::string stored = Compress(GetParam(), RandomBytes(300000, 3));
  for (size_t keep : {stored.size() - 1, stored.size() / 2, size_t{5}}) {
    auto back = Decompress(GetParam(), stored.substr(0, keep));
    EXPECT_EQ(back.error().code(), Code::kAborted) << "kept " << keep;
  }
}

TEST_P(CodecTest, GarbageIsAbortedNamingTheCodec) {
  if (GetParam() == Codec::kNone) GTEST_SKIP();
  std::string stored = Compress(GetParam(), CompressibleBytes(10000));
  stored[0] ^= 0x5a;
  auto back = Decompress(GetParam(), stored);
  ASSERT_EQ(back.error().code(), Code::kAborted);
  EXPECT_NE(back.error().message().find(CodecName(GetParam())), std::string::npos)
      << back.error().message();
  auto trailing = Decompress(GetParam(), Compress(GetParam(), "abc") + "garbage");
  EXPECT_EQ(trailing.error().code(), Code::kAborted);
}

TEST_P(CodecTest, ReadableByTheCommandLineTool) {
  const char* tool = nullptr;
  switch (GetParam()) {
    case Codec::kNone: GTEST_SKIP();
    case Codec::kGzip: tool = "gzip"; break;
    case Codec::kLz4: tool = "lz4"; break;
    case Codec::kZstd: tool = "zstd"; break;
  }
  storage::testing::TempDir tmp;
  std::string data = CompressibleBytes(3 << 20) + RandomBytes(100000, 4);
  ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("s"), Compress(GetParam(), data)).ok());
  std::string out = testing::RunCommand(std::string(tool) + " -dc < " + tmp.Sub("s"));
  EXPECT_TRUE(out == data) << tool << " gave " << out.size() << " bytes";
}

// Decoding a whole frame in memory gives what the source gives, and refuses what it refuses.
TEST_P(CodecTest, DecompressIntoReadsWhatTheSourceReads) {
  const std::string inputs[] = {"x", RandomBytes(3 << 20, 1), CompressibleBytes(5 << 20)};
  for (const std::string& data : inputs) {
    std::string stored = Compress(GetParam(), data, 333333);
    auto back = DecompressIntoString(GetParam(), stored, data.size() + 1);
    ASSERT_TRUE(back.has_value()) << back.error().ToString();
    EXPECT_TRUE(*back == data) << "size " << data.size();
  }
  std::string a = CompressibleBytes(200000);
  std::string b = RandomBytes(70000, 2);
  auto both = DecompressIntoString(GetParam(), Compress(GetParam(), a) + Compress(GetParam(), b),
                                   a.size() + b.size());
  ASSERT_TRUE(both.has_value()) << both.error().ToString();
  EXPECT_TRUE(*both == a + b) << "concatenated frames";
  if (GetParam() == Codec::kNone) return;
  std::string stored = Compress(GetParam(), RandomBytes(300000, 3));
  for (size_t keep : {stored.size() - 1, stored.size() / 2, size_t{5}}) {
    auto cut = DecompressIntoString(GetParam(), stored.substr(0, keep), 300001);
    EXPECT_EQ(cut.error().code(), Code::kAborted) << "kept " << keep;
  }
  std::string garbled = Compress(GetParam(), CompressibleBytes(10000));
  garbled[0] ^= 0x5a;
  auto bad = DecompressIntoString(GetParam(), garbled, 10001);
  ASSERT_EQ(bad.error().code(), Code::kAborted);
  EXPECT_NE(bad.error().message().find(CodecName(GetParam())), std::string::npos)
      << bad.error().message();
  auto trailing = DecompressIntoString(GetParam(), Compress(GetParam(), "abc") + "garbage", 10);
  EXPECT_EQ(trailing.error().code(), Code::kAborted);
}

// Data longer than the room given is not an error: the answer is the capacity, which a caller
// that passed one byte more than it expects refuses.
TEST_P(CodecTest, DecompressIntoStopsAtTheCapacity) {
  const std::string data = CompressibleBytes(1 << 20) + RandomBytes(100000, 6);
  const std::string stored = Compress(GetParam(), data);
  for (size_t capacity : {data.size(), data.size() - 1, size_t{4096}}) {
    std::string out(capacity, '\0');
    auto n = DecompressInto(GetParam(), stored, out.data(), capacity);
    ASSERT_TRUE(n.has_value()) << n.error().ToString() << " capacity " << capacity;
    EXPECT_EQ(*n, capacity);
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest,
                         ::testing::Values(Codec::kNone, Codec::kGzip, Codec::kLz4, Codec::kZstd),
                         [](const auto& info) { return std::string(CodecName(info.param)); });

// checkpoint.lz4_acceleration: lz4's fast mode, for lz4 only, within lz4's range.
TEST(CodecLevelTest, Lz4AccelerationIsANegativeLevel) {
  EXPECT_EQ(CodecLevel(Codec::kLz4, 1), 1);
  EXPECT_EQ(CodecLevel(Codec::kLz4, 4), -4);
  EXPECT_EQ(CodecLevel(Codec::kLz4, 1000), -kMaxLz4Acceleration);
  EXPECT_EQ(CodecLevel(Codec::kZstd, 4), 1);
  EXPECT_EQ(CodecLevel(Codec::kGzip, 4), 1);
}

// The fast mode trades size for time: it stores more, and lz4 itself reads it back.
TEST(CodecLevelTest, Lz4FastModeStoresMoreAndStaysReadable) {
  std::string data;
  for (int i = 0; data.size() < (4u << 20); ++i)
    data += "record " + std::to_string(i * 7919 % 100003) + " value " +
            std::to_string(i * 104729 % 99991) + ";";
  const std::string fast = Compress(Codec::kLz4, data, 100000, CodecLevel(Codec::kLz4, 8));
  EXPECT_GT(fast.size(), Compress(Codec::kLz4, data).size() * 21 / 20);
  auto back = Decompress(Codec::kLz4, fast);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_TRUE(*back == data);
  storage::testing::TempDir tmp;
  ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("s"), fast).ok());
  EXPECT_TRUE(testing::RunCommand("lz4 -dc < " + tmp.Sub("s")) == data);
}

TEST(GzipTest, CorruptByteIsAborted) {
  std::string stored = Compress(Codec::kGzip, RandomBytes(100000, 5));
  stored[stored.size() / 2] ^= 1;
  EXPECT_EQ(Decompress(Codec::kGzip, stored).error().code(), Code::kAborted);
}

TEST(GzipTest, EmptyStreamIsAborted) {
  EXPECT_EQ(Decompress(Codec::kGzip, "").error().code(), Code::kAborted);
}

TEST(CompressingSinkTest, CloseClosesTheUnderlyingSink) {
  for (Codec c : {Codec::kNone, Codec::kGzip, Codec::kLz4, Codec::kZstd}) {
    std::string out;
    auto inner = std::make_unique<StringSink>(&out);
    StringSink* raw = inner.get();
    auto sink = CompressingSink(c, std::move(inner));
    ASSERT_TRUE(sink->Write("abc", 3).ok());
    EXPECT_FALSE(raw->closed());
    ASSERT_TRUE(sink->Close().ok());
    EXPECT_TRUE(raw->closed()) << CodecName(c);
  }
}

}  // namespace
}  // namespace cedana::image
