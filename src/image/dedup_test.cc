// Deduplicated checkpoints end to end on a local store: pack, commit, unpack, what a second
// checkpoint stores, verification of chunks, and the references that keep chunks alive.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "image/checksum.h"
#include "image/chunk_index.h"
#include "image/chunk_sweep.h"
#include "image/chunk_unpack.h"
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

constexpr size_t kPagesBytes = 24 << 20;

class DedupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pages_ = CompressibleBytes(kPagesBytes / 2) + RandomBytes(kPagesBytes / 2, 11);
    WriteImages();
  }

  void WriteImages() {
    (void)fs::RemoveTree(images_);
    ASSERT_TRUE(fs::MakeDirs(images_, 0700).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/core-1.img", "core of pid 1", 0600).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/pages-1.img", pages_, 0600).ok());
    ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/pages-2.img", "short", 0600).ok());
  }

  // Packs the images dir deduplicated into checkpoint `id` and commits it.
  Manifest PackAndCommit(const std::string& id, Codec codec = Codec::kZstd) {
    CheckpointRef ref{"alice", "train", id};
    PackOptions options;
    options.codec = codec;
    options.streams = 2;
    options.dedup = true;
    auto packed = PackImagesDir(images_, store_, ref, options);
    EXPECT_TRUE(packed.has_value()) << packed.error().ToString();
    Manifest m;
    m.id = id;
    m.label = ref.label;
    m.owner = ref.owner;
    m.codec = codec;
    if (packed.has_value()) {
      m.streams = packed->streams;
      m.chunk_index = packed->chunk_index;
    }
    EXPECT_TRUE(store_.Commit(ref, ManifestToJson(m)).ok());
    return m;
  }

  Status Unpack(const Manifest& m) {
    (void)fs::RemoveTree(restored_);
    return UnpackToImagesDir(store_, {m.owner, m.label, m.id}, m, restored_);
  }

  void ExpectRestored() {
    EXPECT_EQ(fs::ReadFile(restored_ + "/pages-1.img").value(), pages_);
    EXPECT_EQ(fs::ReadFile(restored_ + "/pages-2.img").value(), "short");
    EXPECT_EQ(fs::ReadFile(restored_ + "/core-1.img").value(), "core of pid 1");
  }

  std::string ChunkPath(const std::string& digest) {
    return tmp_.Sub("store") + "/alice/train/.chunks/" + digest;
  }

  TempDir tmp_;
  std::string images_ = tmp_.Sub("images");
  std::string restored_ = tmp_.Sub("restored");
  SweptMeanwhileStore store_{tmp_.Sub("store")};
  std::string pages_;
};

TEST_F(DedupTest, PagesGoToChunksAndComeBack) {
  Manifest m = PackAndCommit("c-1");
  ASSERT_TRUE(m.chunk_index.has_value());
  EXPECT_EQ(m.chunk_index->raw_bytes, kPagesBytes + 5);
  EXPECT_EQ(m.chunk_index->new_chunks, store_.ListChunks("alice", "train").value().size());
  // The compressible half shrinks, the random half is stored raw.
  EXPECT_LT(m.chunk_index->new_stored_bytes, kPagesBytes * 3 / 4);
  for (const StreamInfo& s : m.streams) EXPECT_LT(s.raw_bytes, 1u << 20) << "pages in a stream";
  auto reparsed = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(reparsed.has_value()) << reparsed.error().ToString();
  ASSERT_TRUE(reparsed->chunk_index.has_value());
  EXPECT_EQ(reparsed->chunk_index->sha256, m.chunk_index->sha256);
  ASSERT_TRUE(Unpack(m).ok());
  ExpectRestored();
}

TEST_F(DedupTest, ASecondCheckpointStoresOnlyWhatChanged) {
  pages_ = RandomBytes(kPagesBytes, 14);  // chunks of 1 MiB on average, not text's 4 MiB
  WriteImages();
  Manifest first = PackAndCommit("c-1", Codec::kNone);
  // A tenth of the memory changes, in one place: that and the chunks at its ends are new.
  std::string changed = RandomBytes(kPagesBytes / 10, 12);
  pages_.replace(kPagesBytes / 3, changed.size(), changed);
  WriteImages();
  Manifest second = PackAndCommit("c-2", Codec::kNone);
  ASSERT_TRUE(second.chunk_index.has_value());
  EXPECT_LT(second.chunk_index->new_stored_bytes, first.chunk_index->new_stored_bytes / 4);
  EXPECT_GT(second.chunk_index->new_stored_bytes, kPagesBytes / 10);
  ASSERT_TRUE(Unpack(second).ok());
  ExpectRestored();
}

TEST_F(DedupTest, AnAlteredOrMissingChunkIsRefused) {
  Manifest m = PackAndCommit("c-1");
  auto digests = store_.ListChunks("alice", "train").value();
  ASSERT_GE(digests.size(), 2u);
  std::string stored = fs::ReadFile(ChunkPath(digests[0])).value();
  stored[stored.size() - 1] ^= 1;
  ASSERT_TRUE(fs::WriteFileAtomic(ChunkPath(digests[0]), stored, 0600).ok());
  Status altered = Unpack(m);
  EXPECT_EQ(altered.code(), Code::kAborted) << altered.ToString();
  EXPECT_NE(altered.message().find("chunk " + digests[0] + " of label train: checksum mismatch"),
            std::string::npos)
      << altered.ToString();

  // A header that is no chunk's: the decoder's reason is part of the refusal.
  stored[0] = 'x';
  ASSERT_TRUE(fs::WriteFileAtomic(ChunkPath(digests[0]), stored, 0600).ok());
  Status garbled = Unpack(m);
  EXPECT_EQ(garbled.code(), Code::kAborted) << garbled.ToString();
  EXPECT_NE(garbled.message().find("checksum mismatch (stored data altered or truncated: not a "
                                   "stored chunk (its header is missing or unknown))"),
            std::string::npos)
      << garbled.ToString();

  ASSERT_TRUE(store_.DeleteChunk({"alice", "train", digests[0]}).ok());
  Status missing = Unpack(m);
  EXPECT_EQ(missing.code(), Code::kNotFound) << missing.ToString();
  EXPECT_NE(missing.message().find(digests[0]), std::string::npos) << missing.ToString();
}

TEST_F(DedupTest, AnAlteredIndexIsRefused) {
  Manifest m = PackAndCommit("c-1");
  std::string path = tmp_.Sub("store") + "/alice/train/c-1/" + kChunkIndexName;
  std::string json = fs::ReadFile(path).value();
  json.insert(json.size() - 1, " ");
  ASSERT_TRUE(fs::WriteFileAtomic(path, json, 0600).ok());
  Status s = Unpack(m);
  EXPECT_EQ(s.code(), Code::kAborted);
  EXPECT_NE(s.message().find("chunk index of alice/train/c-1: checksum mismatch"),
            std::string::npos)
      << s.ToString();
}

TEST_F(DedupTest, AChunkSweptDuringThePackIsStoredAgain) {
  Manifest first = PackAndCommit("c-1");
  auto digests = store_.ListChunks("alice", "train").value();
  store_.doomed = digests[0];
  Manifest second = PackAndCommit("c-2");
  EXPECT_TRUE(store_.doomed.empty());
  EXPECT_TRUE(fs::Exists(ChunkPath(digests[0])));
  ASSERT_TRUE(Unpack(second).ok());
  ExpectRestored();
}

TEST_F(DedupTest, ChunksLiveAsLongAsACheckpointNamesThem) {
  Manifest first = PackAndCommit("c-1");
  const size_t first_chunks = store_.ListChunks("alice", "train").value().size();
  std::string changed = RandomBytes(kPagesBytes / 4, 13);
  pages_.replace(0, changed.size(), changed);
  WriteImages();
  Manifest second = PackAndCommit("c-2");
  const size_t all_chunks = store_.ListChunks("alice", "train").value().size();
  ASSERT_GT(all_chunks, first_chunks);

  // The first goes: only the chunks the second does not name go with it.
  ASSERT_TRUE(RemoveCheckpoint(store_, {"alice", "train", "c-1"}).ok());
  const size_t left = store_.ListChunks("alice", "train").value().size();
  EXPECT_LT(left, all_chunks);
  ASSERT_TRUE(Unpack(second).ok());
  ExpectRestored();

  // A dump of the label in progress (no index yet) defers the sweep.
  ASSERT_TRUE(store_.CreateStream({"alice", "train", "c-3"}, 0).value()->Close().ok());
  auto deferred = SweepChunks(store_, "alice", "train");
  ASSERT_TRUE(deferred.has_value());
  EXPECT_TRUE(deferred->deferred);
  ASSERT_TRUE(store_.Delete({"alice", "train", "c-3"}).ok());

  // The last one goes: so do all chunks, and the label's dir.
  ASSERT_TRUE(RemoveCheckpoint(store_, {"alice", "train", "c-2"}).ok());
  EXPECT_TRUE(store_.ListChunks("alice", "train").value().empty());
  EXPECT_FALSE(fs::Exists(tmp_.Sub("store") + "/alice/train"));
}

TEST_F(DedupTest, ChunksAreKeptOutOfListingsAndRefs) {
  PackAndCommit("c-1");
  auto listed = store_.List("alice", "train").value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, "c-1");
  EXPECT_TRUE(store_.ListUncommitted().value().empty());
  Status s = store_.Delete({"alice", "train", storage::kChunksDirName});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("may not begin with '.'"), std::string::npos) << s.ToString();
  EXPECT_FALSE(store_.ListChunks("alice", "train").value().empty());
}

// A chunk is named by the manifest's digest of its bytes: BLAKE3 now, SHA-256 in checkpoints
// made before it (manifest format 2), which restore as before.
TEST_F(DedupTest, ChunksAreNamedByTheManifestsDigest) {
  Manifest m = PackAndCommit("c-1");
  CheckpointRef ref{"alice", "train", "c-1"};
  ChunkIndex index = ReadVerifiedIndex(store_, ref, *m.chunk_index).value();
  ChunkIndex older = index;
  std::set<std::string> blake3_names;
  for (ChunkedFile& file : older.files) {
    for (ChunkEntry& chunk : file.chunks) {
      ChunkBuffer buffer, other;
      auto raw = ReadVerifiedChunk(store_, ref, chunk, Digest::kBlake3, &buffer);
      ASSERT_TRUE(raw.has_value()) << raw.error().ToString();
      EXPECT_EQ(ReadVerifiedChunk(store_, ref, chunk, Digest::kSha256, &other).error().code(),
                Code::kAborted);
      // The same stored chunk under its SHA-256 name, as an earlier build stored it.
      blake3_names.insert(chunk.digest);
      std::string stored = fs::ReadFile(ChunkPath(chunk.digest)).value();
      chunk.digest = Sha256Hex(*raw);
      ASSERT_TRUE(fs::WriteFileAtomic(ChunkPath(chunk.digest), stored, 0600).ok());
    }
  }
  for (const std::string& name : blake3_names) ASSERT_TRUE(fs::RemoveTree(ChunkPath(name)).ok());
  const std::string dir = store_.CheckpointDir(ref);
  const std::string json = ChunkIndexToJson(older);
  ASSERT_TRUE(fs::WriteFileAtomic(dir + "/" + kChunkIndexName, json, 0600).ok());
  m.format_version = kSha256DedupManifestFormatVersion;
  m.digest = Digest::kSha256;
  m.chunk_index->bytes = json.size();
  m.chunk_index->sha256 = Sha256Hex(json);
  for (size_t i = 0; i < m.streams.size(); ++i)
    m.streams[i].digest = Sha256Hex(fs::ReadFile(dir + "/stream-" + std::to_string(i)).value());
  m.streams[0].head = {};  // a plain unpack reads no heads
  m.streams[1].head = {};
  Status s = Unpack(m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectRestored();
  m.digest = Digest::kBlake3;
  EXPECT_EQ(Unpack(m).code(), Code::kAborted);
}

TEST(DedupManifestTest, VersionAndChunkIndexGoTogether) {
  Manifest m;
  m.id = "c-1";
  m.label = "l";
  m.owner = "o";
  m.created_at_ms = 1;
  m.streams.push_back({"stream-0", 1, 1, std::string(64, 'a'), {}, false});
  m.chunk_index = ChunkIndexInfo{10, std::string(64, 'b'), 1, 5, 1, 3};
  // This build's version, with a chunk index or without.
  auto v3 = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(v3.has_value()) << v3.error().ToString();
  EXPECT_EQ(v3->StoredBytes(), 1u + 3u);
  // SHA-256 manifests: version 1 with a chunk index would have an old build restore it without
  // its pages; version 2 must have one.
  m.digest = Digest::kSha256;
  m.format_version = kSha256ManifestFormatVersion;
  auto v1 = ParseManifest(ManifestToJson(m));
  ASSERT_FALSE(v1.has_value());
  EXPECT_NE(v1.error().message().find("chunk_index needs format_version 2 or 3"), std::string::npos)
      << v1.error().message();
  m.format_version = kSha256DedupManifestFormatVersion;
  auto v2 = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(v2.has_value()) << v2.error().ToString();
  EXPECT_EQ(v2->StoredBytes(), 1u + 3u);
  m.chunk_index.reset();
  auto missing = ParseManifest(ManifestToJson(m));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("chunk_index is missing"), std::string::npos);
  m.format_version = kManifestFormatVersion;
  m.digest = kNewDigest;
  EXPECT_TRUE(ParseManifest(ManifestToJson(m)).has_value());
}

}  // namespace
}  // namespace cedana::image
