#include "image/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace cedana::image {
namespace {

// 1 MiB that is not all one byte: long enough for BLAKE3's SIMD paths (many 1 KiB chunks).
std::string Pattern() {
  std::string s(size_t{1} << 20, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 31 + 7) % 251);
  return s;
}

// The expected values are what `b3sum` and `sha256sum` print for the same bytes.
TEST(ChecksumTest, Blake3MatchesTheReferenceTool) {
  EXPECT_EQ(DigestHex(Digest::kBlake3, ""),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
  EXPECT_EQ(DigestHex(Digest::kBlake3, "abc"),
            "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
  EXPECT_EQ(DigestHex(Digest::kBlake3, Pattern()),
            "d7e070cc19209a72b9ef5b240ab413901b3e42b2ba8db36e60ce83a0e0564eb4");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A stream is hashed in the pieces its reads and writes happen to have.
TEST(ChecksumTest, HasherGivesTheSameDigestWhateverThePieces) {
  const std::string data = Pattern();
  for (Digest digest : {Digest::kSha256, Digest::kBlake3}) {
    Hasher pieces(digest);
    size_t at = 0;
    for (size_t n = 1; at < data.size(); n = n * 3 + 1) {
      size_t len = std::min(n, data.size() - at);
      pieces.Update(data.data() + at, len);
      at += len;
    }
    pieces.Update(data.data(), 0);
    EXPECT_EQ(pieces.FinalHex(), DigestHex(digest, data)) << DigestName(digest);
  }
}

TEST(ChecksumTest, DigestNamesRoundTrip) {
  for (Digest digest : {Digest::kSha256, Digest::kBlake3})
    EXPECT_EQ(ParseDigest(DigestName(digest)), digest);
  EXPECT_EQ(ParseDigest("md5"), std::nullopt);
  EXPECT_EQ(ParseDigest("BLAKE3"), std::nullopt);
  EXPECT_EQ(kNewDigest, Digest::kBlake3);
}

}  // namespace
}  // namespace cedana::image
