// DirectChunkUnpack on a local store: a deduplicated checkpoint's images served to a reader the
// way CRIU reads them (through a pipe), the pages from the chunks; an altered chunk is refused
// before any of its bytes reach the pipe; the images dir completed for a plain restore.
#include "image/direct_chunk_unpack.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "image/chunking.h"
#include "image/pack.h"
#include "image/restore_source_for_test.h"
#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using storage::CheckpointRef;
using storage::LocalStore;
using storage::testing::TempDir;
using testing::CompressibleBytes;
using testing::RandomBytes;
using testing::SendThroughPipe;

class DirectChunkUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pages_ = RandomBytes(20 << 20, 31) + CompressibleBytes(12 << 20);
    ASSERT_TRUE(fs::MakeDirs(images_, 0700).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/core-1.img", "core of pid 1", 0600).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/pages-1.img", pages_, 0600).ok());
    PackOptions options;
    options.codec = Codec::kLz4;
    options.streams = 2;
    options.dedup = true;
    auto packed = PackImagesDir(images_, store_, ref_, options);
    ASSERT_TRUE(packed.has_value()) << packed.error().ToString();
    manifest_.id = ref_.id;
    manifest_.label = ref_.label;
    manifest_.owner = ref_.owner;
    manifest_.codec = Codec::kLz4;
    manifest_.streams = packed->streams;
    manifest_.chunk_index = packed->chunk_index;
    ASSERT_TRUE(fs::MakeDirs(restored_, 0700).ok());
  }

  std::unique_ptr<DirectChunkUnpack> Start() {
    auto unpack = DirectChunkUnpack::Start(store_, ref_, manifest_, restored_);
    EXPECT_TRUE(unpack.has_value()) << unpack.error().ToString();
    return unpack.has_value() ? std::move(unpack).value() : nullptr;
  }

  TempDir tmp_;
  std::string images_ = tmp_.Sub("images");
  std::string restored_ = tmp_.Sub("restored");
  LocalStore store_{tmp_.Sub("store")};
  CheckpointRef ref_{"alice", "train", "c-1"};
  Manifest manifest_;
  std::string pages_;
};

TEST_F(DirectChunkUnpackTest, ServesThePagesFromTheChunks) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  EXPECT_TRUE(unpack->Has("core-1.img").value());
  EXPECT_TRUE(unpack->Has("pages-1.img").value());
  EXPECT_FALSE(unpack->Has("pages-2.img").value());
  // The pages never reach the images dir: CRIU gets them from the chunks.
  EXPECT_FALSE(fs::Exists(restored_ + "/pages-1.img"));
  auto core = SendThroughPipe(*unpack, "core-1.img");
  ASSERT_TRUE(core.status.ok()) << core.status.ToString();
  EXPECT_EQ(core.bytes, "core of pid 1");
  auto pages = SendThroughPipe(*unpack, "pages-1.img");
  ASSERT_TRUE(pages.status.ok()) << pages.status.ToString();
  EXPECT_TRUE(pages.bytes == pages_) << "the pages did not come back byte for byte";
  EXPECT_TRUE(unpack->Finish().ok());
}

TEST_F(DirectChunkUnpackTest, AnAlteredChunkNeverReachesTheReader) {
  auto index = fs::ReadFile(tmp_.Sub("store") + "/alice/train/c-1/" + kChunkIndexName);
  ASSERT_TRUE(index.has_value());
  auto parsed = ParseChunkIndex(*index);
  ASSERT_TRUE(parsed.has_value());
  // The third chunk of the pages: the two before it are sent, nothing of it or after it.
  const ChunkEntry& third = parsed->files[0].chunks.at(2);
  uint64_t before = parsed->files[0].chunks[0].raw_bytes + parsed->files[0].chunks[1].raw_bytes;
  std::string path = tmp_.Sub("store") + "/alice/train/.chunks/" + third.digest;
  std::string stored = fs::ReadFile(path).value();
  stored[stored.size() / 2] ^= 1;
  ASSERT_TRUE(fs::WriteFileAtomic(path, stored, 0600).ok());

  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  auto sent = SendThroughPipe(*unpack, "pages-1.img");
  EXPECT_EQ(sent.status.code(), Code::kAborted) << sent.status.ToString();
  EXPECT_NE(
      sent.status.message().find("chunk " + third.digest + " of label train: checksum mismatch"),
      std::string::npos)
      << sent.status.ToString();
  EXPECT_EQ(sent.bytes.size(), before);
  EXPECT_TRUE(sent.bytes == pages_.substr(0, before));
  // The tree CRIU restored from it must never run.
  EXPECT_EQ(unpack->Failure().code(), Code::kAborted);
  EXPECT_EQ(unpack->Finish().code(), Code::kAborted);
}

TEST_F(DirectChunkUnpackTest, CompletesTheImagesDirForAPlainRestore) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  ASSERT_TRUE(unpack->CompleteImagesDir().ok());
  EXPECT_TRUE(fs::ReadFile(restored_ + "/pages-1.img").value() == pages_);
  EXPECT_EQ(fs::ReadFile(restored_ + "/core-1.img").value(), "core of pid 1");
}

TEST_F(DirectChunkUnpackTest, RefusesACheckpointThatIsNotDeduplicated) {
  manifest_.chunk_index.reset();
  auto unpack = DirectChunkUnpack::Start(store_, ref_, manifest_, restored_);
  ASSERT_FALSE(unpack.has_value());
  EXPECT_EQ(unpack.error().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace cedana::image
