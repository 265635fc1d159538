#include "image/direct_pack.h"

#include <gtest/gtest.h>

#include <map>

#include "common/fs.h"
#include "image/bytes_for_test.h"
#include "image/pack.h"
#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using storage::CheckpointRef;
using storage::LocalStore;
using storage::testing::TempDir;
using testing::CompressibleBytes;
using testing::RandomBytes;
using testing::RunCommand;

using Files = std::map<std::string, std::string>;

constexpr uint64_t kPart = 1 << 20;

const Files& ImageFiles() {
  static const Files* files = new Files{
      {"empty.img", ""},
      {"core-1.img", "core of pid 1"},
      {"pagemap-1.img", CompressibleBytes(300 << 10)},
      {"pages-1.img", RandomBytes(5 * kPart + 12345, 2)},
      {"pages-2.img", CompressibleBytes(2 * kPart)},  // exactly two parts
  };
  return *files;
}

// Fails every write once `limit` bytes went through, like a full disk.
class FailingSink : public storage::ByteSink {
 public:
  explicit FailingSink(uint64_t limit) : left_(limit) {}
  Status Write(const void*, size_t size) override {
    if (size > left_) return ErrnoStatus(ENOSPC, "writing stream");
    left_ -= size;
    return OkStatus();
  }
  Status Close() override { return OkStatus(); }

 private:
  uint64_t left_;
};

class FailingStore : public LocalStore {
 public:
  using LocalStore::LocalStore;
  Result<std::unique_ptr<storage::ByteSink>> CreateStream(const CheckpointRef&, int) override {
    return std::unique_ptr<storage::ByteSink>(new FailingSink(kPart / 2));
  }
};

class DirectPackTest : public ::testing::TestWithParam<std::tuple<Codec, int>> {
 protected:
  // Feeds every file in 64 KiB pieces, all files open at once (as CRIU may), round robin.
  Result<std::vector<StreamInfo>> Feed(DirectPack& pack, const Files& files) {
    std::vector<std::pair<int, const std::string*>> open;
    for (const auto& [name, data] : files) {
      CEDANA_ASSIGN_OR_RETURN(int id, pack.OpenFile(name));
      open.emplace_back(id, &data);
    }
    std::vector<size_t> at(open.size(), 0);
    for (bool more = true; more;) {
      more = false;
      for (size_t i = 0; i < open.size(); ++i) {
        const std::string& data = *open[i].second;
        size_t n = std::min<size_t>(64 << 10, data.size() - at[i]);
        if (n == 0) continue;
        CEDANA_RETURN_IF_ERROR(pack.Append(open[i].first, data.data() + at[i], n));
        at[i] += n;
        more = true;
      }
    }
    for (const auto& [id, data] : open) CEDANA_RETURN_IF_ERROR(pack.CloseFile(id));
    return pack.Finish();
  }

  Files Unpack(const std::vector<StreamInfo>& infos, Codec codec) {
    Manifest m;
    m.id = ref_.id;
    m.codec = codec;
    m.streams = infos;
    Status s = UnpackToImagesDir(store_, ref_, m, restored_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    Files out;
    std::vector<std::string> names = fs::ListDir(restored_).value();
    for (const auto& name : names) out[name] = fs::ReadFile(restored_ + "/" + name).value();
    return out;
  }

  DirectPackOptions Options(Codec codec, int streams) {
    DirectPackOptions o;
    o.codec = codec;
    o.streams = streams;
    o.part_bytes = kPart;
    o.memory_limit = 2 * kPart;
    return o;
  }

  TempDir tmp_;
  std::string restored_ = tmp_.Sub("restored");
  LocalStore store_{tmp_.Sub("store")};
  CheckpointRef ref_{"alice", "train", "c-1"};
};

TEST_P(DirectPackTest, RoundTripsThroughUnpackWithinTheMemoryLimit) {
  auto [codec, streams] = GetParam();
  auto pack = DirectPack::Start(store_, ref_, Options(codec, streams));
  ASSERT_TRUE(pack.has_value()) << pack.error().ToString();
  auto infos = Feed(**pack, ImageFiles());
  ASSERT_TRUE(infos.has_value()) << infos.error().ToString();
  ASSERT_EQ(infos->size(), static_cast<size_t>(streams));
  EXPECT_EQ(Unpack(*infos, codec), ImageFiles());
  DirectPackStats stats = (*pack)->stats();
  EXPECT_LE(stats.peak_buffered, 2 * kPart);
  EXPECT_EQ(stats.files, static_cast<int>(ImageFiles().size()));
  uint64_t total = 0;
  for (const auto& [name, data] : ImageFiles()) total += data.size();
  EXPECT_EQ(stats.file_bytes, total);
}

INSTANTIATE_TEST_SUITE_P(Codecs, DirectPackTest,
                         ::testing::Combine(::testing::Values(Codec::kNone, Codec::kZstd,
                                                              Codec::kGzip),
                                            ::testing::Values(1, 3)));

// The format PackImagesDir writes: small files whole, large ones as <name>@<offset> parts that
// join by hand.
TEST_F(DirectPackTest, SmallFilesWholeLargeOnesAsPartsThatJoinByHand) {
  DirectPackOptions o = Options(Codec::kNone, 2);
  o.memory_limit = 8 * kPart;  // no file is sent early to free memory
  auto pack = DirectPack::Start(store_, ref_, o);
  ASSERT_TRUE(pack.has_value());
  auto infos = Feed(**pack, ImageFiles());
  ASSERT_TRUE(infos.has_value()) << infos.error().ToString();
  std::string dir = store_.CheckpointDir(ref_);
  std::string listing = RunCommand("tar -tf " + dir + "/stream-0; tar -tf " + dir + "/stream-1");
  EXPECT_NE(listing.find("core-1.img\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("empty.img\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("pages-1.img@0000000000000000\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("pages-1.img@0000000005242880\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("pages-2.img@0000000001048576\n"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("pages-2.img@0000000002097152"), std::string::npos) << listing;
  std::string by_hand = tmp_.Sub("by-hand");
  ASSERT_TRUE(fs::MakeDirs(by_hand).ok());
  RunCommand("cd " + by_hand + " && tar -xf " + dir + "/stream-0 && tar -xf " + dir +
             "/stream-1 && cat pages-1.img@* > pages-1.img");
  EXPECT_EQ(fs::ReadFile(by_hand + "/pages-1.img").value(), ImageFiles().at("pages-1.img"));
}

// Many files growing at once, each less than a part: memory fills with partly received files,
// which must then travel as parts rather than wait forever.
TEST_F(DirectPackTest, PartlyReceivedFilesDoNotDeadlockTheMemoryLimit) {
  Files files;
  for (int i = 0; i < 6; ++i)
    files["pages-" + std::to_string(i) + ".img"] = RandomBytes(kPart - 7, i);
  auto pack = DirectPack::Start(store_, ref_, Options(Codec::kLz4, 2));
  ASSERT_TRUE(pack.has_value());
  auto infos = Feed(**pack, files);
  ASSERT_TRUE(infos.has_value()) << infos.error().ToString();
  EXPECT_EQ(Unpack(*infos, Codec::kLz4), files);
  EXPECT_LE((*pack)->stats().peak_buffered, 2 * kPart);
}

TEST_F(DirectPackTest, StoreFailureStopsTheProducerWithTheCause) {
  FailingStore bad(tmp_.Sub("bad"));
  auto pack = DirectPack::Start(bad, ref_, Options(Codec::kNone, 2));
  ASSERT_TRUE(pack.has_value());
  auto infos = Feed(**pack, {{"pages-1.img", RandomBytes(20 * kPart, 1)}});
  ASSERT_FALSE(infos.has_value());
  // Append stops with kAborted; the store's own error comes from Abort.
  EXPECT_EQ(infos.error().code(), Code::kAborted) << infos.error().ToString();
  Status cause = (*pack)->Abort();
  EXPECT_NE(cause.ToString().find("No space left on device"), std::string::npos)
      << cause.ToString();
}

TEST_F(DirectPackTest, RefusesUnsafeAndRepeatedNames) {
  auto pack = DirectPack::Start(store_, ref_, Options(Codec::kNone, 1));
  ASSERT_TRUE(pack.has_value());
  EXPECT_EQ((*pack)->OpenFile("../etc/passwd").error().code(), Code::kInvalidArgument);
  EXPECT_EQ((*pack)->OpenFile(std::string(90, 'a')).error().code(), Code::kInvalidArgument);
  ASSERT_TRUE((*pack)->OpenFile("core-1.img").has_value());
  EXPECT_EQ((*pack)->OpenFile("core-1.img").error().code(), Code::kInvalidArgument);
  EXPECT_TRUE((*pack)->Abort().ok());
}

TEST_F(DirectPackTest, MemoryLimitBelowOnePartIsRefused) {
  DirectPackOptions o = Options(Codec::kNone, 1);
  o.memory_limit = kPart - 1;
  EXPECT_EQ(DirectPack::Start(store_, ref_, o).error().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cedana::image
