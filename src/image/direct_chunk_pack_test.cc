// DirectChunkPack on a local store: the chunks it cuts from pages received in pieces are the
// ones PackChunks cuts from the same pages on disk (so the two kinds of checkpoint of a label
// share them), a second checkpoint stores only what changed, the memory limit holds with files
// received interleaved, and a chunk swept during the pack fails it by name.
#include "image/direct_chunk_pack.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "image/chunk_index.h"
#include "image/chunk_unpack.h"
#include "image/chunking.h"
#include "image/manifest.h"
#include "image/pack.h"
#include "image/restore_source_for_test.h"
#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using storage::CheckpointRef;
using storage::testing::TempDir;
using testing::CompressibleBytes;
using testing::RandomBytes;
using testing::SweptMeanwhileStore;

constexpr size_t kPagesBytes = 40 << 20;  // two and a half regions

// Fails the Nth chunk it is asked to store, as a full disk or a refusing bucket would.
class FailingChunkWriter : public storage::ChunkWriter {
 public:
  FailingChunkWriter(std::unique_ptr<storage::ChunkWriter> real, int fail_at)
      : real_(std::move(real)), left_(fail_at) {}
  Status Put(const std::string& digest, std::string_view bytes) override {
    if (--left_ == 0) return UnavailableError("writing a chunk: No space left on device");
    return real_->Put(digest, bytes);
  }
  Status Publish() override { return real_->Publish(); }

 private:
  std::unique_ptr<storage::ChunkWriter> real_;
  std::atomic<int> left_;
};
class ChunkFailingStore : public SweptMeanwhileStore {
 public:
  using SweptMeanwhileStore::SweptMeanwhileStore;
  Result<std::unique_ptr<storage::ChunkWriter>> WriteChunks(const std::string& owner,
                                                            const std::string& label) override {
    CEDANA_ASSIGN_OR_RETURN(auto real, LocalStore::WriteChunks(owner, label));
    if (fail_at == 0) return real;
    return std::unique_ptr<storage::ChunkWriter>(new FailingChunkWriter(std::move(real), fail_at));
  }
  int fail_at = 0;  // 0: none fails
};

class DirectChunkPackTest : public ::testing::Test {
 protected:
  // Hands `files` (name, bytes) to a DirectChunkPack of checkpoint `id` in pieces of `piece`
  // bytes, taking turns between the files, as CRIU's image streamer may.
  Result<ChunkIndexInfo> PackDirect(const std::string& id,
                                    const std::vector<std::pair<std::string, std::string>>& files,
                                    uint64_t memory_limit = 256ull << 20, size_t piece = 300001) {
    DirectChunkPackOptions options;
    options.threads = 2;
    options.codec = Codec::kZstd;
    options.memory_limit = memory_limit;
    CEDANA_ASSIGN_OR_RETURN(auto pack,
                            DirectChunkPack::Start(store_, {"alice", "train", id}, options));
    std::vector<int> handles;
    for (const auto& [name, bytes] : files) {
      CEDANA_ASSIGN_OR_RETURN(int h, pack->OpenFile(name));
      handles.push_back(h);
    }
    for (size_t at = 0;; at += piece) {
      bool more = false;
      for (size_t i = 0; i < files.size(); ++i) {
        const std::string& bytes = files[i].second;
        if (at >= bytes.size()) continue;
        more = true;
        size_t n = std::min(piece, bytes.size() - at);
        // As a dump does: a refused Append stops CRIU, and the pack's failure is the cause.
        if (Status s = pack->Append(handles[i], bytes.data() + at, n); !s.ok()) {
          Status cause = pack->Abort();
          return cause.ok() ? s : cause;
        }
      }
      if (!more) break;
    }
    for (int h : handles) CEDANA_RETURN_IF_ERROR(pack->CloseFile(h));
    last_stats_ = pack->stats();
    return pack->Finish();
  }

  // Packs `pages` from an images dir with PackImagesDir (dedup) into checkpoint `id`.
  Result<ChunkIndexInfo> PackFromDisk(const std::string& id, const std::string& pages) {
    std::string images = tmp_.Sub("images-" + id);
    CEDANA_RETURN_IF_ERROR(fs::MakeDirs(images, 0700));
    CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(images + "/core-1.img", "core", 0600));
    CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(images + "/pages-1.img", pages, 0600));
    PackOptions options;
    options.codec = Codec::kZstd;
    options.streams = 2;
    options.dedup = true;
    CEDANA_ASSIGN_OR_RETURN(PackedImages packed,
                            PackImagesDir(images, store_, {"alice", "train", id}, options));
    return *packed.chunk_index;
  }

  std::string Index(const std::string& id) {
    auto index = fs::ReadFile(tmp_.Sub("store") + "/alice/train/" + id + "/" + kChunkIndexName);
    return index.has_value() ? *index : "";
  }

  // Writes the pages back from checkpoint `id`'s chunks, as a restore does (its streams, for the
  // other images, are not the chunk pack's).
  Result<std::string> Restore(const std::string& id, const ChunkIndexInfo& info,
                              const std::string& name = "pages-1.img") {
    Manifest m;
    m.id = id;
    m.label = "train";
    m.owner = "alice";
    m.chunk_index = info;
    std::string dir = tmp_.Sub("restored-" + id);
    (void)fs::RemoveTree(dir);
    CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700));
    CEDANA_RETURN_IF_ERROR(
        UnpackChunks(store_, {"alice", "train", id}, m, dir, 2, nullptr, nullptr));
    return fs::ReadFile(dir + "/" + name);
  }

  TempDir tmp_;
  ChunkFailingStore store_{tmp_.Sub("store")};
  DirectChunkPackStats last_stats_;
};

TEST_F(DirectChunkPackTest, CutsTheChunksAPackFromDiskCuts) {
  std::string pages = CompressibleBytes(kPagesBytes / 2) + RandomBytes(kPagesBytes / 2, 21);
  auto direct = PackDirect("c-1", {{"pages-1.img", pages}});
  ASSERT_TRUE(direct.has_value()) << direct.error().ToString();
  EXPECT_EQ(direct->raw_bytes, kPagesBytes);
  EXPECT_EQ(direct->new_chunks, store_.ListChunks("alice", "train").value().size());
  EXPECT_LT(direct->new_stored_bytes, kPagesBytes * 3 / 4);  // the compressible half shrank
  auto restored = Restore("c-1", *direct);
  ASSERT_TRUE(restored.has_value()) << restored.error().ToString();
  EXPECT_TRUE(*restored == pages) << "the pages did not come back byte for byte";

  // The same pages packed from an images dir: the same index, and nothing new to store.
  auto from_disk = PackFromDisk("c-2", pages);
  ASSERT_TRUE(from_disk.has_value()) << from_disk.error().ToString();
  EXPECT_EQ(Index("c-2"), Index("c-1"));
  EXPECT_EQ(from_disk->new_chunks, 0u);
}

TEST_F(DirectChunkPackTest, ASecondCheckpointStoresOnlyWhatChanged) {
  std::string pages = RandomBytes(kPagesBytes, 22);
  auto first = PackDirect("c-1", {{"pages-1.img", pages}});
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(first->new_stored_bytes, kPagesBytes + 5 * first->new_chunks);  // raw, with headers
  std::string changed = RandomBytes(kPagesBytes / 10, 23);
  pages.replace(kPagesBytes / 3, changed.size(), changed);
  auto second = PackDirect("c-2", {{"pages-1.img", pages}});
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  EXPECT_GT(second->new_stored_bytes, kPagesBytes / 10);
  EXPECT_LT(second->new_stored_bytes, first->new_stored_bytes / 4);
  auto restored = Restore("c-2", *second);
  ASSERT_TRUE(restored.has_value()) << restored.error().ToString();
  EXPECT_TRUE(*restored == pages) << "the pages did not come back byte for byte";
}

TEST_F(DirectChunkPackTest, StaysWithinItsMemoryLimitWithFilesInterleaved) {
  // Two regions' worth of memory for three files received at once: partly received regions are
  // cut early rather than waited for, and nothing is lost.
  std::string a = RandomBytes(kPagesBytes, 24), b = CompressibleBytes(kPagesBytes / 2),
              c = RandomBytes(kChunkRegionBytes / 3, 25);
  auto packed = PackDirect("c-1", {{"pages-1.img", a}, {"pages-2.img", b}, {"pages-3.img", c}},
                           2 * kChunkRegionBytes);
  ASSERT_TRUE(packed.has_value()) << packed.error().ToString();
  EXPECT_LE(last_stats_.peak_buffered, 2 * kChunkRegionBytes);
  EXPECT_EQ(last_stats_.files, 3);
  EXPECT_EQ(last_stats_.file_bytes, a.size() + b.size() + c.size());
  int i = 0;
  for (const std::string* bytes : {&a, &b, &c}) {
    auto restored = Restore("c-1", *packed, fmt::format("pages-{}.img", ++i));
    ASSERT_TRUE(restored.has_value()) << restored.error().ToString();
    EXPECT_TRUE(*restored == *bytes) << "pages-" << i << ".img did not come back byte for byte";
  }
}

TEST_F(DirectChunkPackTest, AChunkSweptDuringThePackFailsItByName) {
  std::string pages = RandomBytes(kPagesBytes, 26);
  ASSERT_TRUE(PackDirect("c-1", {{"pages-1.img", pages}}).has_value());
  store_.doomed = store_.ListChunks("alice", "train").value()[0];
  auto second = PackDirect("c-2", {{"pages-1.img", pages}});
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), Code::kAborted);
  EXPECT_NE(second.error().message().find("1 chunk(s) of label train that checkpoint c-2 names "
                                          "were removed while it was stored"),
            std::string::npos)
      << second.error().ToString();
}

TEST_F(DirectChunkPackTest, AStoreThatFailsStopsThePackWithItsError) {
  // Within the memory limit of two regions the producer must be told, not left waiting.
  store_.fail_at = 3;
  auto packed =
      PackDirect("c-1", {{"pages-1.img", RandomBytes(kPagesBytes * 2, 27)}}, 2 * kChunkRegionBytes);
  ASSERT_FALSE(packed.has_value());
  EXPECT_NE(packed.error().message().find("No space left on device"), std::string::npos)
      << packed.error().ToString();
}

TEST_F(DirectChunkPackTest, RefusesWhatIsNotAPagesImageAndALimitBelowARegion) {
  auto small = DirectChunkPack::Start(store_, {"alice", "train", "c-1"},
                                      {1, Codec::kNone, 1, kChunkRegionBytes - 1});
  ASSERT_FALSE(small.has_value());
  EXPECT_EQ(small.error().code(), Code::kInvalidArgument);
  auto pack = DirectChunkPack::Start(store_, {"alice", "train", "c-1"}, {});
  ASSERT_TRUE(pack.has_value());
  auto core = (*pack)->OpenFile("core-1.img");
  ASSERT_FALSE(core.has_value());
  EXPECT_EQ(core.error().code(), Code::kInvalidArgument);
  ASSERT_TRUE((*pack)->OpenFile("pages-1.img").has_value());
  EXPECT_EQ((*pack)->OpenFile("pages-1.img").error().code(), Code::kInvalidArgument);
  EXPECT_TRUE((*pack)->Abort().ok());
}

}  // namespace
}  // namespace cedana::image
