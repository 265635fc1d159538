#include "image/images_dir_follower.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <thread>

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

using Files = std::map<std::string, std::string>;

constexpr uint64_t kPart = 1 << 20;

void Append(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(fd);
}

// Holds every write until released, like a store that stalls.
class StallingStore : public LocalStore {
 public:
  using LocalStore::LocalStore;
  std::atomic<bool> released{false};
  Result<std::unique_ptr<storage::ByteSink>> CreateStream(const CheckpointRef&, int) override {
    struct Sink : storage::ByteSink {
      std::atomic<bool>* released;
      Status Write(const void*, size_t) override {
        while (!released->load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return OkStatus();
      }
      Status Close() override { return OkStatus(); }
    };
    auto sink = std::make_unique<Sink>();
    sink->released = &released;
    return std::unique_ptr<storage::ByteSink>(std::move(sink));
  }
};

class ImagesDirFollowerTest : public ::testing::Test {
 protected:
  ImagesDirFollowerTest() { EXPECT_TRUE(fs::MakeDirs(images_).ok()); }

  StreamingPackOptions Options(Codec codec, int streams) {
    StreamingPackOptions o;
    o.codec = codec;
    o.streams = streams;
    o.part_bytes = kPart;
    o.memory_limit = 2 * kPart;
    return o;
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
    for (const auto& name : names)
      out[name] = fs::ReadFile(restored_ + "/" + name).value();
    return out;
  }

  TempDir tmp_;
  std::string images_ = tmp_.Sub("images");
  std::string restored_ = tmp_.Sub("restored");
  LocalStore store_{tmp_.Sub("store")};
  CheckpointRef ref_{"alice", "train", "c-1"};
};

// As CRIU does: pages images grow while the follower runs, the small images come at the end.
// Each piece is written only once the pack has taken everything before it, so the test shows
// (without timing) that the pages were packed while they were still being written.
TEST_F(ImagesDirFollowerTest, PacksPagesWhileTheyAreWrittenAndTheRestAtTheEnd) {
  Files files{{"pages-1.img", RandomBytes(3 * kPart + 4321, 1)},
              {"pages-2.img", CompressibleBytes(2 * kPart + 17)},
              {"core-1.img", "core of pid 1"},
              {"empty.img", ""}};
  auto pack = StreamingPack::Start(store_, ref_, Options(Codec::kZstd, 2));
  ASSERT_TRUE(pack.has_value()) << pack.error().ToString();
  auto follower = ImagesDirFollower::Start(images_, pack->get(), /*background=*/false);
  uint64_t written = 0;
  for (const char* name : {"pages-1.img", "pages-2.img"}) {
    const std::string& data = files.at(name);
    for (size_t at = 0; at < data.size(); at += 300 << 10) {
      std::string piece = data.substr(at, 300 << 10);
      Append(images_ + "/" + name, piece);
      written += piece.size();
      for (int i = 0; i < 2000 && (*pack)->stats().file_bytes < written; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ASSERT_EQ((*pack)->stats().file_bytes, written) << "the follower did not take " << name;
    }
  }
  Append(images_ + "/core-1.img", files.at("core-1.img"));
  Append(images_ + "/empty.img", "");
  Status s = follower->Complete();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(follower->bytes_while_dumping(), written);
  auto infos = (*pack)->Finish();
  ASSERT_TRUE(infos.has_value()) << infos.error().ToString();
  EXPECT_EQ(Unpack(*infos, Codec::kZstd), files);
}

// A pages image that appears only after the last look is packed whole by Complete.
TEST_F(ImagesDirFollowerTest, PagesImageThatAppearsLateIsPackedWhole) {
  auto pack = StreamingPack::Start(store_, ref_, Options(Codec::kLz4, 1));
  ASSERT_TRUE(pack.has_value());
  auto follower = ImagesDirFollower::Start(images_, pack->get(), /*background=*/true);
  Files files{{"pages-7.img", RandomBytes(kPart + 5, 7)}, {"pagemap-7.img", "map"}};
  for (const auto& [name, data] : files) Append(images_ + "/" + name, data);
  ASSERT_TRUE(follower->Complete().ok());
  auto infos = (*pack)->Finish();
  ASSERT_TRUE(infos.has_value()) << infos.error().ToString();
  EXPECT_EQ(Unpack(*infos, Codec::kLz4), files);
}

// In unprivileged mode the job's owner writes into the images dir: a link planted there (as a
// pages image followed early, or a file added at the end) must not pull another file in.
TEST_F(ImagesDirFollowerTest, PlantedLinkIsRefused) {
  Append(tmp_.Sub("secret"), "not the job's");
  ASSERT_EQ(::symlink(tmp_.Sub("secret").c_str(), (images_ + "/pages-1.img").c_str()), 0);
  ASSERT_EQ(::symlink(tmp_.Sub("secret").c_str(), (images_ + "/core-1.img").c_str()), 0);
  auto pack = StreamingPack::Start(store_, ref_, Options(Codec::kNone, 1));
  ASSERT_TRUE(pack.has_value());
  auto follower = ImagesDirFollower::Start(images_, pack->get(), false);
  Status s = follower->Complete();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("-1.img"), std::string::npos) << s.ToString();
  EXPECT_EQ(s.ToString().find("not the job's"), std::string::npos) << s.ToString();
  (void)(*pack)->Abort();
}

// CRIU failed while the follower waits for the pack's memory (the store stalls): Stop must
// not wait for the store.
TEST_F(ImagesDirFollowerTest, StopDoesNotWaitForAStalledStore) {
  StallingStore stalled(tmp_.Sub("stalled"));
  auto pack = StreamingPack::Start(stalled, ref_, Options(Codec::kNone, 1));
  ASSERT_TRUE(pack.has_value());
  auto follower = ImagesDirFollower::Start(images_, pack->get(), false);
  Append(images_ + "/pages-1.img", RandomBytes(6 * kPart, 3));
  for (int i = 0; i < 2000 && (*pack)->stats().file_bytes < 2 * kPart; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GE((*pack)->stats().file_bytes, 2 * kPart);  // the limit is reached: the follower waits
  follower->Stop();
  stalled.released = true;
  (void)(*pack)->Abort();
}

}  // namespace
}  // namespace cedana::image
