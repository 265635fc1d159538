#include "image/direct_unpack.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "common/fs.h"
#include "common/unique_fd.h"
#include "image/bytes_for_test.h"
#include "image/pack.h"
#include "image/restore_source_for_test.h"
#include "image/tar.h"
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

using Files = std::map<std::string, std::string>;

const Files& ImageFiles() {
  static const Files* files = new Files{
      {"core-1.img", "core of pid 1"},
      {"inventory.img", "inventory"},
      {"pagemap-1.img", CompressibleBytes(1 << 20)},
      {"pages-1.img", RandomBytes(18 << 20, 2)},
      {"pages-2.img", CompressibleBytes(5 << 20)},
  };
  return *files;
}

// Gives the tar entry whose header starts at `header` of an archive the name `name`, with a
// valid header checksum: an alteration that only the stream's hash can tell.
void RenameTarEntry(std::string* data, size_t header, const std::string& name) {
  std::fill(data->begin() + header, data->begin() + header + 100, '\0');
  data->replace(header, name.size(), name);
  std::fill(data->begin() + header + 148, data->begin() + header + 156, ' ');  // chksum field
  unsigned sum = 0;
  for (size_t i = 0; i < kTarBlockSize; ++i) sum += static_cast<unsigned char>((*data)[header + i]);
  char field[8];
  std::snprintf(field, sizeof field, "%06o", sum);
  data->replace(header + 148, 7, std::string(field, 6) + '\0');
}

// What CRIU would read from the pipe that Send() fills.
Result<std::string> SendThroughPipe(DirectUnpack& unpack, const std::string& name) {
  testing::Sent sent = testing::SendThroughPipe(unpack, name);
  if (!sent.status.ok()) return sent.status;
  return sent.bytes;
}

class DirectUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::MakeDirs(images_).ok());
    for (const auto& [name, data] : ImageFiles())
      ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/" + name, data, 0600).ok());
    ASSERT_TRUE(fs::MakeDirs(restored_, 0700).ok());
  }

  Manifest Pack(Codec codec, int streams) {
    PackOptions options;
    options.codec = codec;
    options.streams = streams;
    options.part_bytes = 4 << 20;
    auto infos = PackImagesDir(images_, store_, ref_, options);
    EXPECT_TRUE(infos.has_value()) << infos.error().ToString();
    Manifest m;
    m.id = ref_.id;
    m.label = ref_.label;
    m.owner = ref_.owner;
    m.codec = codec;
    if (infos.has_value()) m.streams = infos->streams;
    return m;
  }

  void FlipByte(int stream, uint64_t offset) {
    std::string path = store_.CheckpointDir(ref_) + "/stream-" + std::to_string(stream);
    std::string data = fs::ReadFile(path).value();
    data[offset] ^= 0x20;
    ASSERT_TRUE(fs::WriteFileAtomic(path, data).ok());
  }

  TempDir tmp_;
  std::string images_ = tmp_.Sub("images");
  std::string restored_ = tmp_.Sub("restored");
  LocalStore store_{tmp_.Sub("store")};
  CheckpointRef ref_{"alice", "train", "c-1"};
};

class DirectRoundTripTest : public DirectUnpackTest,
                            public ::testing::WithParamInterface<std::tuple<Codec, int>> {};

TEST_P(DirectRoundTripTest, HeadsFirstThenPagesAsTheyArrive) {
  auto [codec, streams] = GetParam();
  Manifest m = Pack(codec, streams);
  for (const StreamInfo& s : m.streams) {
    EXPECT_EQ(s.head.digest.size(), 64u);
    EXPECT_LE(s.head.raw_bytes, s.raw_bytes);
  }
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value()) << unpack.error().ToString();
  DirectUnpack& u = **unpack;
  ASSERT_TRUE(u.WaitForHeads().ok());
  // Every image but the pages is complete once the heads are.
  for (const auto& [name, data] : ImageFiles()) {
    if (IsPagesImage(name)) continue;
    EXPECT_TRUE(fs::ReadFile(restored_ + "/" + name).value() == data) << name;
    EXPECT_EQ(u.Has(name).value(), true);
  }
  EXPECT_EQ(u.Has("pages-1.img").value(), true);
  EXPECT_EQ(u.Has("pages-9.img").value(), false);
  EXPECT_EQ(u.Has("fdinfo-9.img").value(), false);
  EXPECT_EQ(u.Has("../store").error().code(), Code::kInvalidArgument);
  for (const char* name : {"pages-2.img", "pages-1.img", "core-1.img"}) {
    auto got = SendThroughPipe(u, name);
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    EXPECT_TRUE(*got == ImageFiles().at(name)) << name << ": " << got->size() << " bytes";
  }
  EXPECT_TRUE(u.Finish().ok());
}

INSTANTIATE_TEST_SUITE_P(CodecsAndStreams, DirectRoundTripTest,
                         ::testing::Combine(::testing::Values(Codec::kNone, Codec::kZstd),
                                            ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::string(CodecName(std::get<0>(info.param))) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "streams";
                         });

// Memory that does not compress is stored as the plain archive: its pages are served from the
// stored file itself and never copied into the images dir, unless a plain restore needs them.
class StoredPagesTest : public DirectUnpackTest, public ::testing::WithParamInterface<Codec> {};

TEST_P(StoredPagesTest, PagesOfUncompressedStreamsAreServedFromTheStore) {
  Manifest m = Pack(GetParam(), 3);
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value()) << unpack.error().ToString();
  ASSERT_TRUE((*unpack)->WaitForHeads().ok());
  for (const char* name : {"pages-1.img", "pages-2.img"}) {
    auto got = SendThroughPipe(**unpack, name);
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    EXPECT_TRUE(*got == ImageFiles().at(name)) << name << ": " << got->size() << " bytes";
  }
  ASSERT_TRUE((*unpack)->Finish().ok());
  bool copied = fs::Exists(restored_ + "/pages-1.img") || fs::Exists(restored_ + "/pages-2.img");
  EXPECT_EQ(copied, GetParam() != Codec::kNone) << "pages of an uncompressed stream were copied";
}

INSTANTIATE_TEST_SUITE_P(Codecs, StoredPagesTest, ::testing::Values(Codec::kNone, Codec::kZstd),
                         [](const auto& info) { return std::string(CodecName(info.param)); });

// Pages of streams that are all stored uncompressed, CRIU reads in place: whole in one stream,
// or in parts spread over several. The runs handed over hold the image's bytes in order, and
// each file has a file position of its own.
class InPlaceTest : public DirectUnpackTest, public ::testing::WithParamInterface<int> {};

TEST_P(InPlaceTest, PagesOfUncompressedStreamsAreReadInPlace) {
  const int streams = GetParam();
  Manifest m = Pack(Codec::kNone, streams);
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value()) << unpack.error().ToString();
  DirectUnpack& u = **unpack;
  ASSERT_TRUE(u.WaitForHeads().ok());
  EXPECT_TRUE(u.AllPagesInPlace());
  for (const char* name : {"pages-1.img", "pages-2.img"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(u.Has(name).value(), true);
    auto first = u.InPlace(name);
    ASSERT_TRUE(first.has_value()) << first.error().ToString();
    ASSERT_TRUE(first->has_value()) << "not read in place";
    const InPlaceImage& image = **first;
    EXPECT_TRUE(ReadRuns(image) == ImageFiles().at(name)) << "the runs differ from the image";
    // With several streams, a run per 4 MiB part: pages-1 (18 MiB) has five, over every
    // stream; pages-2 (5 MiB) two.
    const size_t parts = (ImageFiles().at(name).size() + (4 << 20) - 1) >> 22;
    EXPECT_EQ(image.runs.size(), streams > 1 ? parts : 1u);
    if (streams > 1 && std::string(name) == "pages-1.img") {
      EXPECT_EQ(image.files.size(), static_cast<size_t>(streams));
    }
    for (const UniqueFd& f : image.files)
      EXPECT_EQ(::lseek(f.get(), 0, SEEK_CUR), 0) << "a file position is shared";
    auto again = u.InPlace(name);  // CRIU opens a pages image twice
    ASSERT_TRUE(again.has_value() && again->has_value());
    EXPECT_TRUE(ReadRuns(**again) == ImageFiles().at(name));
  }
  EXPECT_FALSE(u.InPlace("core-1.img").value().has_value());
  EXPECT_TRUE(u.Finish().ok());
}

INSTANTIATE_TEST_SUITE_P(Streams, InPlaceTest, ::testing::Values(1, 3),
                         [](const auto& info) { return std::to_string(info.param) + "streams"; });

// Compressed pages have no place to be read from: the pipe.
TEST_F(DirectUnpackTest, CompressedPagesAreNotReadInPlace) {
  for (int streams : {1, 3}) {
    SCOPED_TRACE("zstd x" + std::to_string(streams));
    ref_.id = "c-zstd-" + std::to_string(streams);
    Manifest m = Pack(Codec::kZstd, streams);
    std::string dir = tmp_.Sub("restored-" + ref_.id);
    ASSERT_TRUE(fs::MakeDirs(dir, 0700).ok());
    auto unpack = DirectUnpack::Start(store_, ref_, m, dir);
    ASSERT_TRUE(unpack.has_value()) << unpack.error().ToString();
    ASSERT_TRUE((*unpack)->WaitForHeads().ok());
    for (const char* name : {"pages-1.img", "pages-2.img"}) {
      ASSERT_EQ((*unpack)->Has(name).value(), true);
      auto at = (*unpack)->InPlace(name);
      ASSERT_TRUE(at.has_value()) << at.error().ToString();
      EXPECT_FALSE(at->has_value()) << name;
    }
    EXPECT_FALSE((*unpack)->AllPagesInPlace());
    EXPECT_TRUE((*unpack)->Finish().ok());
  }
}

// The runs come from the stored tar headers before the streams' threads have checked them: a
// part whose header was altered to overlap another or to leave a gap leaves that image to the
// pipe, and the stream's checksum fails the restore.
TEST_F(DirectUnpackTest, PartsAlteredToOverlapOrLeaveAGapAreNotReadInPlace) {
  // The part of pages-1 at 16 MiB, in whichever stream holds it, claims another offset.
  for (auto [claimed, what] : {std::pair{4 << 20, "overlap"}, std::pair{20 << 20, "gap"}}) {
    SCOPED_TRACE(what);
    ref_.id = std::string("c-") + what;
    Manifest m = Pack(Codec::kNone, 3);
    const std::string last = TarPartName("pages-1.img", 16 << 20);
    bool altered = false;
    for (int stream = 0; stream < 3; ++stream) {
      std::string path = store_.CheckpointDir(ref_) + "/stream-" + std::to_string(stream);
      std::string data = fs::ReadFile(path).value();
      size_t at = data.find(last);
      if (at == std::string::npos) continue;
      ASSERT_EQ(at % kTarBlockSize, 0u);
      RenameTarEntry(&data, at, TarPartName("pages-1.img", claimed));
      ASSERT_TRUE(fs::WriteFileAtomic(path, data).ok());
      altered = true;
    }
    ASSERT_TRUE(altered);

    std::string dir = tmp_.Sub("restored-" + ref_.id);
    ASSERT_TRUE(fs::MakeDirs(dir, 0700).ok());
    auto unpack = DirectUnpack::Start(store_, ref_, m, dir);
    ASSERT_TRUE(unpack.has_value()) << unpack.error().ToString();
    DirectUnpack& u = **unpack;
    ASSERT_TRUE(u.WaitForHeads().ok());
    ASSERT_EQ(u.Has("pages-1.img").value(), true);
    auto pages1 = u.InPlace("pages-1.img");
    ASSERT_TRUE(pages1.has_value()) << pages1.error().ToString();
    EXPECT_FALSE(pages1->has_value()) << "an altered part list was read in place";
    auto pages2 = u.InPlace("pages-2.img");
    ASSERT_TRUE(pages2.has_value() && pages2->has_value()) << "pages-2 was not altered";
    Status done = u.Finish();
    EXPECT_NE(done.ToString().find("checksum mismatch"), std::string::npos) << done.ToString();
  }
}

// Compressed pages land in the images dir, and what CRIU has read of them is released from it as
// the send goes on: the page cache does not hold a second copy of the restored memory. CRIU still
// gets every byte, and an image is sent once.
TEST_F(DirectUnpackTest, WhatCriuReadIsReleasedFromTheImagesDir) {
  const std::string pages = CompressibleBytes(96 << 20);
  ASSERT_TRUE(fs::WriteFileAtomic(images_ + "/pages-3.img", pages, 0600).ok());
  Manifest m = Pack(Codec::kZstd, 3);
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value()) << unpack.error().ToString();
  ASSERT_TRUE((*unpack)->WaitForHeads().ok());
  auto got = SendThroughPipe(**unpack, "pages-3.img");
  ASSERT_TRUE(got.has_value()) << got.error().ToString();
  EXPECT_TRUE(*got == pages) << got->size() << " bytes";
  ASSERT_TRUE((*unpack)->Finish().ok());
  struct stat st {};
  ASSERT_EQ(::stat((restored_ + "/pages-3.img").c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), pages.size());
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, pages.size() / 2)
      << "what CRIU read is still in the images dir";
  auto again = SendThroughPipe(**unpack, "pages-3.img");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), Code::kFailedPrecondition) << again.error().ToString();
}

// What is served is what the stream's thread hashed: the file it opened, not whatever is at its
// path by the time CRIU asks.
TEST_F(DirectUnpackTest, PagesComeFromTheFileThatWasVerified) {
  Manifest m = Pack(Codec::kNone, 1);
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value());
  ASSERT_TRUE((*unpack)->WaitForHeads().ok());
  ASSERT_TRUE((*unpack)->Finish().ok());
  FlipByte(0, m.streams[0].stored_bytes - 4096);  // a new file in its place
  auto got = SendThroughPipe(**unpack, "pages-2.img");
  ASSERT_TRUE(got.has_value()) << got.error().ToString();
  EXPECT_TRUE(*got == ImageFiles().at("pages-2.img")) << "the replaced file was served";
}

TEST_F(DirectUnpackTest, ChangedHeadStopsBeforeCriuReadsAnything) {
  Manifest m = Pack(Codec::kNone, 1);
  FlipByte(0, 700);  // in the head's first file
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value());
  Status heads = (*unpack)->WaitForHeads();
  EXPECT_EQ(heads.code(), Code::kAborted) << heads.ToString();
  EXPECT_NE(heads.message().find("checksum mismatch"), std::string::npos) << heads.message();
  EXPECT_EQ((*unpack)->Finish().code(), Code::kAborted);
}

TEST_F(DirectUnpackTest, ChangedPagesFailTheFinishAndTheirSend) {
  Manifest m = Pack(Codec::kNone, 1);
  FlipByte(0, m.streams[0].stored_bytes - 4096);  // in the last pages
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value());
  ASSERT_TRUE((*unpack)->WaitForHeads().ok());
  Status done = (*unpack)->Finish();
  EXPECT_EQ(done.code(), Code::kAborted);
  EXPECT_NE(done.message().find("checksum mismatch"), std::string::npos) << done.message();
  EXPECT_FALSE(SendThroughPipe(**unpack, "pages-2.img").has_value());
}

// The first tail entry of an uncompressed stream renamed to a part of core-1.img, with a valid
// tar header: without the tail rule it would rewrite the verified core image at offset 5 while
// CRIU may already be reading it; the stream's checksum fails only at its end.
TEST_F(DirectUnpackTest, ATailEntryCannotRewriteAVerifiedImage) {
  Manifest m = Pack(Codec::kNone, 1);
  std::string path = store_.CheckpointDir(ref_) + "/stream-0";
  std::string data = fs::ReadFile(path).value();
  size_t header = m.streams[0].head.raw_bytes;
  ASSERT_LT(header + 512, data.size());
  ASSERT_EQ(data.compare(header, 6, "pages-"), 0) << "the tail starts with the pages";
  RenameTarEntry(&data, header, TarPartName("core-1.img", 5));
  ASSERT_TRUE(fs::WriteFileAtomic(path, data).ok());

  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value());
  ASSERT_TRUE((*unpack)->WaitForHeads().ok());  // the head itself is intact
  Status done = (*unpack)->Finish();
  EXPECT_EQ(done.code(), Code::kAborted);  // reported as the stream's checksum mismatch
  EXPECT_NE(done.message().find("checksum mismatch"), std::string::npos) << done.message();
  EXPECT_NE(done.message().find("core-1.img comes after the stream's verified head"),
            std::string::npos)
      << "the mismatch does not say what was found: " << done.message();
  EXPECT_EQ((*unpack)->Failure().message(), done.message()) << "the unpack ended by itself";
  EXPECT_EQ(fs::ReadFile(restored_ + "/core-1.img").value(), ImageFiles().at("core-1.img"))
      << "the verified core image was rewritten by the tail";
}

TEST_F(DirectUnpackTest, ACancelledUnpackReportsNoFailureOfItsOwn) {
  Manifest m = Pack(Codec::kLz4, 2);
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_TRUE(unpack.has_value());
  ASSERT_TRUE((*unpack)->WaitForHeads().ok());
  (*unpack)->Cancel();
  (void)(*unpack)->Finish();
  EXPECT_TRUE((*unpack)->Failure().ok()) << (*unpack)->Failure().ToString();
}

TEST_F(DirectUnpackTest, CheckpointsWithoutHeadsNeedAFullUnpack) {
  Manifest m = Pack(Codec::kLz4, 2);
  m.streams[1].head = {};
  auto unpack = DirectUnpack::Start(store_, ref_, m, restored_);
  ASSERT_FALSE(unpack.has_value());
  EXPECT_EQ(unpack.error().code(), Code::kFailedPrecondition);
}

TEST_F(DirectUnpackTest, HeadsSurviveTheManifestAndOlderManifestsKeepTheirText) {
  Manifest m = Pack(Codec::kLz4, 2);
  auto parsed = ParseManifest(ManifestToJson(m));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->streams[1].head.raw_bytes, m.streams[1].head.raw_bytes);
  EXPECT_EQ(parsed->streams[1].head.digest, m.streams[1].head.digest);
  for (StreamInfo& s : m.streams) s.head = {};
  EXPECT_EQ(ManifestToJson(m).find("\"head\""), std::string::npos);
}

}  // namespace
}  // namespace cedana::image
