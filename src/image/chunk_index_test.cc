#include "image/chunk_index.h"

#include <gtest/gtest.h>

#include <string>

namespace cedana::image {
namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');

ChunkIndex TwoFiles() {
  ChunkIndex index;
  index.files.push_back({"pages-1.img", 300, {{kA, 100}, {kB, 200}}});
  index.files.push_back({"pages-2.img", 100, {{kA, 100}}});
  return index;
}

Status ParseError(const std::string& json) {
  auto parsed = ParseChunkIndex(json);
  return parsed.has_value() ? OkStatus() : parsed.error();
}

TEST(ChunkIndexTest, RoundTrips) {
  auto parsed = ParseChunkIndex(ChunkIndexToJson(TwoFiles()));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  ASSERT_EQ(parsed->files.size(), 2u);
  EXPECT_EQ(parsed->files[0].name, "pages-1.img");
  EXPECT_EQ(parsed->files[0].size, 300u);
  ASSERT_EQ(parsed->files[0].chunks.size(), 2u);
  EXPECT_EQ(parsed->files[0].chunks[1].digest, kB);
  EXPECT_EQ(parsed->files[0].chunks[1].raw_bytes, 200u);
  EXPECT_EQ(parsed->Digests(), (std::set<std::string>{kA, kB}));
}

TEST(ChunkIndexTest, RefusesWhatIsNotAnIndexOfPages) {
  auto with = [](const std::string& file) { return R"({"files":[)" + file + "]}"; };
  EXPECT_NE(ParseError(with(R"({"name":"core-1.img","size":1,"chunks":[[")" + kA + R"(",1]]})"))
                .message()
                .find("pages image"),
            std::string::npos);
  EXPECT_NE(ParseError(with(R"({"name":"pages-1.img","size":1,"chunks":[["ABC",1]]})"))
                .message()
                .find("64 lowercase hex"),
            std::string::npos);
  EXPECT_NE(ParseError(with(R"({"name":"pages-1.img","size":5,"chunks":[[")" + kA + R"(",1]]})"))
                .message()
                .find("add up to 1 bytes, the file has 5"),
            std::string::npos);
  EXPECT_NE(ParseError(with(R"({"name":"pages-1.img","size":0,"chunks":[[")" + kA + R"(",0]]})"))
                .message()
                .find("bytes must be 1.."),
            std::string::npos);
  EXPECT_NE(ParseError(with(R"({"name":"pages-1.img","size":0,"chunks":[]},)"
                            R"({"name":"pages-1.img","size":0,"chunks":[]})"))
                .message()
                .find("named twice"),
            std::string::npos);
  EXPECT_EQ(ParseError("[]").code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseError("not json").code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cedana::image
