#include "storage/local_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/fs.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::storage {
namespace {

using testing::TempDir;

std::string ReadAll(ByteSource& src) {
  std::string out;
  char buf[7];  // odd size: exercises partial reads
  for (;;) {
    auto n = src.Read(buf, sizeof buf);
    EXPECT_TRUE(n.has_value()) << n.error().ToString();
    if (!n.has_value() || *n == 0) return out;
    out.append(buf, *n);
  }
}

void WriteStream(CheckpointStore& store, const CheckpointRef& ref, int index,
                 const std::string& data) {
  auto sink = store.CreateStream(ref, index);
  ASSERT_TRUE(sink.has_value()) << sink.error().ToString();
  ASSERT_TRUE((*sink)->Write(data.data(), data.size()).ok());
  ASSERT_TRUE((*sink)->Close().ok());
}

struct OpenStoreCase {
  std::string location;
  Code want;
};

TEST(OpenStoreTest, Locations) {
  const OpenStoreCase cases[] = {
      {"", Code::kInvalidArgument},
      {"relative/dir", Code::kInvalidArgument},
      {"./dir", Code::kInvalidArgument},
      {"s3://bucket/prefix", Code::kOk},
      {"s3://my-checkpoints-bucket", Code::kOk},
      {"s3://B/prefix", Code::kInvalidArgument},
      {"s3://", Code::kInvalidArgument},
      {"gs://bucket", Code::kInvalidArgument},
      {"/var/lib/cedana/checkpoints", Code::kOk},
  };
  S3Config config;
  config.access_key_id = "AKID";
  config.secret_access_key = "SECRET";
  for (const auto& c : cases) {
    auto store = OpenStore(c.location, config, kNoStreamMemory);
    EXPECT_EQ(store.error().code(), c.want) << c.location << ": " << store.error().ToString();
    if (store.has_value()) {
      EXPECT_EQ((*store)->Describe(), c.location);
    }
  }
}

TEST(OpenStoreTest, S3WithoutCredentialsSaysWhatToSet) {
  auto store = OpenStore("s3://bucket", S3Config{}, kNoStreamMemory);
  ASSERT_FALSE(store.has_value());
  EXPECT_EQ(store.error().code(), Code::kInvalidArgument);
  EXPECT_NE(store.error().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

TEST(OpenStoreTest, TrailingSlashIsDropped) {
  auto store = OpenStore("/data/ckpt/", S3Config{}, kNoStreamMemory);
  ASSERT_TRUE(store.has_value());
  EXPECT_EQ((*store)->Describe(), "/data/ckpt");
}

TEST(LocalStoreTest, StreamRoundTripAndCommit) {
  TempDir tmp;
  LocalStore store(tmp.path());
  CheckpointRef ref{"alice", "train", "c-1"};
  WriteStream(store, ref, 0, "hello");
  WriteStream(store, ref, 1, std::string(100000, 'x'));

  EXPECT_EQ(store.ReadManifest(ref).error().code(), Code::kNotFound);
  auto listed = store.List(std::nullopt, std::nullopt);
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->empty()) << "uncommitted checkpoint listed";

  ASSERT_TRUE(store.Commit(ref, "{\"id\":\"c-1\"}").ok());
  auto manifest = store.ReadManifest(ref);
  ASSERT_TRUE(manifest.has_value());
  EXPECT_EQ(*manifest, "{\"id\":\"c-1\"}");
  struct stat st;
  // A checkpoint holds a job's memory: readable by its writer (root) alone.
  ASSERT_EQ(::stat(store.CheckpointDir(ref).append("/manifest.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(store.CheckpointDir(ref).append("/stream-0").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(store.CheckpointDir(ref).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  auto src = store.OpenStream(ref, 0);
  ASSERT_TRUE(src.has_value());
  EXPECT_EQ(ReadAll(**src), "hello");
  auto src1 = store.OpenStream(ref, 1);
  ASSERT_TRUE(src1.has_value());
  EXPECT_EQ(ReadAll(**src1), std::string(100000, 'x'));
  EXPECT_EQ(store.OpenStream(ref, 2).error().code(), Code::kNotFound);
}

// A user may own their directory of the store (unprivileged mode, NFS) and put anything there
// under a manifest's name: a symlink to another user's manifest or a root-only file, a symlinked
// label dir, a FIFO (which would block the reader), a file of gigabytes.
TEST(LocalStoreTest, ManifestReadsFollowNoSymlinkAndAreBounded) {
  TempDir tmp;
  LocalStore store(tmp.path());
  CheckpointRef bob{"bob", "l", "c-0"}, ref{"alice", "l", "c-1"};
  ASSERT_TRUE(store.Commit(bob, "{\"owner\":\"bob\"}").ok());
  std::string dir = store.CheckpointDir(ref);
  ASSERT_TRUE(fs::MakeDirs(dir, 0700).ok());
  std::string manifest = dir + "/manifest.json";

  ASSERT_EQ(::symlink((store.CheckpointDir(bob) + "/manifest.json").c_str(), manifest.c_str()), 0);
  auto linked = store.ReadManifest(ref);
  ASSERT_FALSE(linked.has_value());
  EXPECT_EQ(linked.error().code(), Code::kInvalidArgument) << linked.error().ToString();
  EXPECT_NE(linked.error().message().find("symlink"), std::string::npos);

  ::unlink(manifest.c_str());
  ASSERT_EQ(::mkfifo(manifest.c_str(), 0600), 0);
  EXPECT_EQ(store.ReadManifest(ref).error().code(), Code::kInvalidArgument);  // and returns

  ::unlink(manifest.c_str());
  ASSERT_TRUE(fs::WriteFileAtomic(manifest, std::string(kMaxManifestBytes + 1, ' '), 0600).ok());
  auto big = store.ReadManifest(ref);
  ASSERT_FALSE(big.has_value());
  EXPECT_NE(big.error().message().find("manifest.json is"), std::string::npos);
  EXPECT_NE(big.error().message().find("more than a manifest may be"), std::string::npos);

  // A label dir that is a symlink to bob's label: bob's manifest must not be read as alice's.
  CheckpointRef via_link{"alice", "bobs", "c-0"};
  ASSERT_EQ(::symlink((tmp.path() + "/bob/l").c_str(), (tmp.path() + "/alice/bobs").c_str()), 0);
  EXPECT_EQ(store.ReadManifest(via_link).error().code(), Code::kInvalidArgument);
  EXPECT_TRUE(store.ReadManifest(bob).has_value());
}

TEST(LocalStoreTest, ListFiltersAndSkipsUncommitted) {
  TempDir tmp;
  LocalStore store(tmp.path());
  const CheckpointRef committed[] = {{"alice", "train", "c-1"},
                                     {"alice", "train", "c-2"},
                                     {"alice", "eval", "c-3"},
                                     {"bob", "train", "c-4"}};
  for (const auto& ref : committed) {
    WriteStream(store, ref, 0, "x");
    ASSERT_TRUE(store.Commit(ref, "{}").ok());
  }
  WriteStream(store, {"alice", "train", "c-5"}, 0, "in progress");
  ASSERT_TRUE(fs::MakeDirs(tmp.Sub("alice/train/empty-dir")).ok());
  ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("stray-file"), "x").ok());

  auto ids = [&](std::optional<std::string> owner, std::optional<std::string> label) {
    auto refs = store.List(owner, label);
    EXPECT_TRUE(refs.has_value());
    std::vector<std::string> out;
    for (const auto& r : *refs) out.push_back(r.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids(std::nullopt, std::nullopt), (V{"c-1", "c-2", "c-3", "c-4"}));
  EXPECT_EQ(ids("alice", std::nullopt), (V{"c-1", "c-2", "c-3"}));
  EXPECT_EQ(ids(std::nullopt, "train"), (V{"c-1", "c-2", "c-4"}));
  EXPECT_EQ(ids("alice", "train"), (V{"c-1", "c-2"}));
  EXPECT_EQ(ids("carol", std::nullopt), V{});

  auto uncommitted = store.ListUncommitted();
  ASSERT_TRUE(uncommitted.has_value()) << uncommitted.error().ToString();
  std::vector<std::string> paths;
  for (const auto& r : *uncommitted) paths.push_back(r.Path());
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(paths, (V{"alice/train/c-5", "alice/train/empty-dir"}));
}

TEST(LocalStoreTest, ListOfMissingRootIsEmpty) {
  TempDir tmp;
  LocalStore store(tmp.Sub("not-yet"));
  auto refs = store.List(std::nullopt, std::nullopt);
  ASSERT_TRUE(refs.has_value());
  EXPECT_TRUE(refs->empty());
}

TEST(LocalStoreTest, DeleteRemovesEmptyParents) {
  TempDir tmp;
  LocalStore store(tmp.path());
  CheckpointRef a{"alice", "train", "c-1"};
  CheckpointRef b{"alice", "eval", "c-2"};
  for (const auto& ref : {a, b}) {
    WriteStream(store, ref, 0, "x");
    ASSERT_TRUE(store.Commit(ref, "{}").ok());
  }
  ASSERT_TRUE(store.Delete(a).ok());
  EXPECT_FALSE(fs::Exists(tmp.Sub("alice/train")));
  EXPECT_TRUE(fs::Exists(tmp.Sub("alice/eval/c-2/manifest.json")));
  ASSERT_TRUE(store.Delete(b).ok());
  EXPECT_FALSE(fs::Exists(tmp.Sub("alice")));
  EXPECT_TRUE(fs::Exists(tmp.path()));
  EXPECT_TRUE(store.Delete(b).ok()) << "deleting a missing checkpoint is fine";
}

TEST(LocalStoreTest, RejectsRefsThatEscapeTheStore) {
  TempDir tmp;
  LocalStore store(tmp.path());
  const CheckpointRef bad[] = {
      {"", "l", "i"}, {"o", "..", "i"}, {"o", "l", "a/b"}, {".", "l", "i"}, {"o", "l", ""}};
  for (const auto& ref : bad) {
    EXPECT_EQ(store.CreateStream(ref, 0).error().code(), Code::kInvalidArgument) << ref.Path();
    EXPECT_EQ(store.Commit(ref, "{}").code(), Code::kInvalidArgument) << ref.Path();
    EXPECT_EQ(store.Delete(ref).code(), Code::kInvalidArgument) << ref.Path();
    EXPECT_EQ(store.OpenStream(ref, 0).error().code(), Code::kInvalidArgument) << ref.Path();
  }
  EXPECT_EQ(store.List(std::string("../x"), std::nullopt).error().code(), Code::kInvalidArgument);
}

TEST(LocalStoreTest, CheckWritableCreatesRoot) {
  TempDir tmp;
  LocalStore store(tmp.Sub("a/b/c"));
  ASSERT_TRUE(store.CheckWritable("").ok());
  EXPECT_TRUE(fs::Exists(tmp.Sub("a/b/c")));
  auto names = fs::ListDir(tmp.Sub("a/b/c"));
  ASSERT_TRUE(names.has_value());
  EXPECT_TRUE(names->empty()) << "probe file left behind";
}

TEST(LocalStoreTest, CheckWritableProbesTheOwnersDir) {
  TempDir tmp;
  LocalStore store(tmp.path());
  ASSERT_TRUE(store.CheckWritable("alice").ok());
  struct stat st {};
  ASSERT_EQ(::stat(tmp.Sub("alice").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto names = fs::ListDir(tmp.Sub("alice"));
  ASSERT_TRUE(names.has_value());
  EXPECT_TRUE(names->empty()) << "probe file left behind";
  EXPECT_EQ(store.CheckWritable("../etc").code(), Code::kInvalidArgument);
}

TEST(LocalStoreTest, CheckWritableReportsReadOnlyDir) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  TempDir tmp;
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0555), 0);
  LocalStore store(tmp.path());
  Status s = store.CheckWritable("");
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_NE(s.message().find(tmp.path()), std::string::npos) << s.message();
  LocalStore nested(tmp.Sub("sub"));
  Status n = nested.CheckWritable("");
  EXPECT_EQ(n.code(), Code::kPermissionDenied);
  EXPECT_NE(n.message().find(tmp.Sub("sub")), std::string::npos) << n.message();
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
}

TEST(LocalStoreTest, AnOwnersUnreadableLabelDirIsSkipped) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every directory";
  TempDir tmp;
  LocalStore store(tmp.path());
  for (const char* label : {"train", "eval"}) {
    CheckpointRef ref{"alice", label, "c-1"};
    auto sink = store.CreateStream(ref, 0);
    ASSERT_TRUE(sink.has_value());
    ASSERT_TRUE((*sink)->Close().ok());
    ASSERT_TRUE(store.Commit(ref, "{}").ok());
  }
  ASSERT_EQ(::chmod(tmp.Sub("alice/eval").c_str(), 0), 0);
  auto refs = store.List(std::string("alice"), std::nullopt);
  ASSERT_TRUE(refs.has_value()) << "one unreadable label failed the owner's whole listing: "
                                << refs.error().ToString();
  ASSERT_EQ(refs->size(), 1u);
  EXPECT_EQ((*refs)[0].label, "train");
  auto only = store.List(std::string("alice"), std::string("eval"));
  EXPECT_FALSE(only.has_value()) << "a listing of that very label says why it cannot be read";
  ASSERT_EQ(::chmod(tmp.Sub("alice/eval").c_str(), 0700), 0);
}

}  // namespace
}  // namespace cedana::storage
