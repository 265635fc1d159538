// DirectChunkUnpack on a local store: a deduplicated checkpoint's images served to a reader the
// way CRIU reads them (through a pipe), the pages from the chunks; an altered chunk is refused
// before any of its bytes reach the pipe; pages whose chunks are all stored raw read in place,
// an altered one failing the Finish; the images dir completed for a plain restore.
#include "image/direct_chunk_unpack.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <functional>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "image/chunk_codec.h"
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
using testing::ReadRuns;
using testing::SendThroughPipe;

class DirectChunkUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Reading in place holds a descriptor per chunk file: like the daemon, use the hard limit
    // (a shell's soft one may be 1024, which leaves no room).
    rlimit files{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
    files.rlim_cur = files.rlim_max;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
    pages_ = RandomBytes(20 << 20, 31) + CompressibleBytes(12 << 20);
    raw_pages_ = RandomBytes(24 << 20, 32);
    ASSERT_TRUE(fs::MakeDirs(images_, 0700).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/core-1.img", "core of pid 1", 0600).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/pages-1.img", pages_, 0600).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/pages-3.img", raw_pages_, 0600).ok());
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

  // Rewrites the stored chunk `digest` with `change` applied to its stored bytes.
  void AlterChunk(const std::string& digest, const std::function<void(std::string&)>& change) {
    std::string path = tmp_.Sub("store") + "/alice/train/.chunks/" + digest;
    std::string stored = fs::ReadFile(path).value();
    change(stored);
    ASSERT_TRUE(fs::WriteFileAtomic(path, stored, 0600).ok());
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
  std::string pages_;      // pages-1.img: random, then compressible (some chunks compressed)
  std::string raw_pages_;  // pages-3.img: random (every chunk stored raw)
};

// The stored chunks of an image, by the signed index.
std::vector<ChunkEntry> ChunksOf(const std::string& store, const std::string& name) {
  auto index = ParseChunkIndex(fs::ReadFile(store + "/alice/train/c-1/" + kChunkIndexName).value());
  for (const ChunkedFile& f : index.value().files)
    if (f.name == name) return f.chunks;
  return {};
}

TEST_F(DirectChunkUnpackTest, ServesThePagesFromTheChunks) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  EXPECT_TRUE(unpack->Has("core-1.img").value());
  EXPECT_TRUE(unpack->Has("pages-1.img").value());
  EXPECT_FALSE(unpack->Has("pages-2.img").value());
  EXPECT_TRUE(unpack->Has("pages-3.img").value());
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
  const std::vector<ChunkEntry> chunks = ChunksOf(tmp_.Sub("store"), "pages-1.img");
  // The third chunk of the pages: the two before it are sent, nothing of it or after it.
  const ChunkEntry& third = chunks.at(2);
  uint64_t before = chunks[0].raw_bytes + chunks[1].raw_bytes;
  AlterChunk(third.digest, [](std::string& stored) { stored[stored.size() / 2] ^= 1; });

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

TEST_F(DirectChunkUnpackTest, PagesOfChunksStoredRawAreReadInPlace) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  const std::vector<ChunkEntry> chunks = ChunksOf(tmp_.Sub("store"), "pages-3.img");
  ASSERT_GT(chunks.size(), 3u);
  for (int time = 0; time < 2; ++time) {  // CRIU opens a pages image twice
    auto image = unpack->InPlace("pages-3.img");
    ASSERT_TRUE(image.has_value()) << image.error().ToString();
    ASSERT_TRUE(image->has_value()) << "pages of raw chunks went to the pipe";
    // A run per chunk, each the chunk's bytes after its header in its own file.
    ASSERT_EQ((*image)->files.size(), chunks.size());
    ASSERT_EQ((*image)->runs.size(), chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_EQ((*image)->runs[i].file, i);
      EXPECT_EQ((*image)->runs[i].offset, kChunkHeaderBytes);
      EXPECT_EQ((*image)->runs[i].length, chunks[i].raw_bytes);
    }
    EXPECT_TRUE(ReadRuns(**image) == raw_pages_) << "the runs differ from the image";
  }
  // Some of pages-1's chunks are compressed: all of it goes through the pipe.
  EXPECT_FALSE(unpack->InPlace("pages-1.img").value().has_value());
  EXPECT_FALSE(unpack->InPlace("core-1.img").value().has_value());
  EXPECT_TRUE(SendThroughPipe(*unpack, "pages-1.img").bytes == pages_);
  EXPECT_TRUE(unpack->Finish().ok());
}

// CRIU reads an image in place before its chunks are checked, into the tree it leaves stopped:
// an altered chunk must fail the Finish, so that the tree never runs.
TEST_F(DirectChunkUnpackTest, AnAlteredChunkReadInPlaceFailsTheFinish) {
  const ChunkEntry altered = ChunksOf(tmp_.Sub("store"), "pages-3.img").at(2);
  // Header and size unchanged: still a raw chunk.
  AlterChunk(altered.digest, [](std::string& stored) { stored[stored.size() / 2] ^= 1; });

  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  auto image = unpack->InPlace("pages-3.img");
  ASSERT_TRUE(image.has_value() && image->has_value());
  // At once: the Finish waits for the check.
  Status finished = unpack->Finish();
  EXPECT_FALSE(ReadRuns(**image) == raw_pages_);
  EXPECT_EQ(finished.code(), Code::kAborted) << finished.ToString();
  EXPECT_NE(
      finished.message().find("chunk " + altered.digest + " of label train: checksum mismatch"),
      std::string::npos)
      << finished.ToString();
}

// A restore cancelled while CRIU reads in place: what was left unchecked keeps the tree from
// running (the Finish fails, though no chunk was found altered).
TEST_F(DirectChunkUnpackTest, ChunksLeftUncheckedByACancelFailTheFinish) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  unpack->Cancel();
  auto image = unpack->InPlace("pages-3.img");
  ASSERT_TRUE(image.has_value() && image->has_value());
  EXPECT_EQ(unpack->Finish().code(), Code::kAborted);
}

// Only a chunk whose header says it is stored raw is read in place: one that says it is
// compressed goes through the pipe, whose decoder refuses it.
TEST_F(DirectChunkUnpackTest, AChunkThatSaysItIsCompressedIsNotReadInPlace) {
  const ChunkEntry relabelled = ChunksOf(tmp_.Sub("store"), "pages-3.img").at(1);
  AlterChunk(relabelled.digest, [](std::string& stored) {
    ASSERT_EQ(stored.substr(0, kChunkHeaderBytes), "cdc1n");
    stored[4] = 'z';
  });

  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  EXPECT_FALSE(unpack->InPlace("pages-3.img").value().has_value());
  EXPECT_EQ(SendThroughPipe(*unpack, "pages-3.img").status.code(), Code::kAborted);
  EXPECT_EQ(unpack->Finish().code(), Code::kAborted);
}

// Each chunk file stays open until the end, and CRIU is handed copies: an image with more
// chunks than the descriptor limit leaves room for goes through the pipe instead.
TEST_F(DirectChunkUnpackTest, ChunksBeyondTheDescriptorLimitGoThroughThePipe) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit tight = before;
  tight.rlim_cur = 1024 + 2 * ChunksOf(tmp_.Sub("store"), "pages-3.img").size() - 1;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  auto image = unpack->InPlace("pages-3.img");
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
  ASSERT_TRUE(image.has_value()) << image.error().ToString();
  EXPECT_FALSE(image->has_value());
  // The same answer the second time, whatever the limit is now.
  EXPECT_FALSE(unpack->InPlace("pages-3.img").value().has_value());
  EXPECT_TRUE(SendThroughPipe(*unpack, "pages-3.img").bytes == raw_pages_);
  EXPECT_TRUE(unpack->Finish().ok());
}

TEST_F(DirectChunkUnpackTest, CompletesTheImagesDirForAPlainRestore) {
  auto unpack = Start();
  ASSERT_NE(unpack, nullptr);
  ASSERT_TRUE(unpack->WaitForHeads().ok());
  ASSERT_TRUE(unpack->CompleteImagesDir().ok());
  EXPECT_TRUE(fs::ReadFile(restored_ + "/pages-1.img").value() == pages_);
  EXPECT_TRUE(fs::ReadFile(restored_ + "/pages-3.img").value() == raw_pages_);
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
