#include "image/tar.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <optional>

#include "common/fs.h"
#include "common/unique_fd.h"
#include "image/bytes_for_test.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::image {
namespace {

using storage::testing::TempDir;
using testing::RandomBytes;
using testing::RunCommand;
using testing::StringSink;
using testing::StringSource;

using Files = std::map<std::string, std::string>;

void MakeFiles(const std::string& dir, const Files& files) {
  ASSERT_TRUE(fs::MakeDirs(dir).ok());
  for (const auto& [name, data] : files) {
    ASSERT_TRUE(fs::WriteFileAtomic(dir + "/" + name, data, 0600).ok()) << name;
  }
}

Files ReadFiles(const std::string& dir) {
  Files out;
  auto names = fs::ListDir(dir);
  EXPECT_TRUE(names.has_value());
  for (const auto& name : *names) out[name] = fs::ReadFile(dir + "/" + name).value();
  return out;
}

std::string Archive(const std::string& dir, const Files& files) {
  std::string out;
  StringSink sink(&out);
  TarWriter tar(&sink);
  for (const auto& [name, data] : files) EXPECT_TRUE(tar.AddFile(dir, name).ok()) << name;
  EXPECT_TRUE(tar.Finish().ok());
  return out;
}

Result<std::vector<std::string>> Extract(std::string archive, const std::string& dir) {
  EXPECT_TRUE(fs::MakeDirs(dir).ok());
  StringSource src(std::move(archive), 1000);
  TarReader tar(&src);
  return tar.ExtractAll(dir);
}

Files SampleFiles() {
  return {{"empty.img", ""},
          {"core-1.img", "core"},
          {"pages-1.img", RandomBytes(1 << 20, 7)},
          {"odd.img", RandomBytes(513, 8)},
          {std::string(kTarMaxNameLength, 'n'), "longest name"}};
}

TEST(TarTest, RoundTrip) {
  TempDir tmp;
  Files files = SampleFiles();
  MakeFiles(tmp.Sub("in"), files);
  std::string archive = Archive(tmp.Sub("in"), files);
  uint64_t want = kTarTrailerSize;
  for (const auto& [name, data] : files) want += TarEntrySize(data.size());
  EXPECT_EQ(archive.size(), want);

  auto names = Extract(archive, tmp.Sub("out"));
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
  EXPECT_EQ(names->size(), files.size());
  EXPECT_EQ(ReadFiles(tmp.Sub("out")), files);
  struct stat st;
  ASSERT_EQ(::stat(tmp.Sub("out/core-1.img").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(TarTest, GnuTarExtractsOurArchive) {
  TempDir tmp;
  Files files = SampleFiles();
  MakeFiles(tmp.Sub("in"), files);
  ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("a.tar"), Archive(tmp.Sub("in"), files)).ok());
  ASSERT_TRUE(fs::MakeDirs(tmp.Sub("gnu")).ok());
  std::string cmd = "tar -xf " + tmp.Sub("a.tar") + " -C " + tmp.Sub("gnu") + " 2>&1";
  EXPECT_EQ(RunCommand(cmd), "");
  EXPECT_EQ(ReadFiles(tmp.Sub("gnu")), files);
}

TEST(TarTest, ReadsGnuTarArchiveOfRegularFiles) {
  TempDir tmp;
  Files files = SampleFiles();
  MakeFiles(tmp.Sub("in"), files);
  // Named files, not ".": that would add a "./" directory entry.
  RunCommand("cd " + tmp.Sub("in") + " && tar -cf " + tmp.Sub("g.tar") + " *.img n*");
  auto names = Extract(fs::ReadFile(tmp.Sub("g.tar")).value(), tmp.Sub("out"));
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
  EXPECT_EQ(ReadFiles(tmp.Sub("out")), files);
}

struct RejectCase {
  std::string what;
  std::string setup;  // shell commands run in the source dir
  std::string members;
};

TEST(TarTest, RejectsUnsafeEntries) {
  const RejectCase cases[] = {
      {"subdirectory path", "mkdir sub && echo x > sub/f", "sub/f"},
      {"directory", "mkdir d", "d"},
      {"symlink", "ln -s /etc/passwd link", "link"},
      {"dot-dot name", "echo x > a..b", "a..b"},
      {"fifo", "mkfifo p", "p"},
  };
  for (const auto& c : cases) {
    TempDir tmp;
    ASSERT_TRUE(fs::MakeDirs(tmp.Sub("in")).ok());
    RunCommand("cd " + tmp.Sub("in") + " && " + c.setup + " && tar --no-recursion -cf " +
               tmp.Sub("x.tar") + " " + c.members);
    auto archive = fs::ReadFile(tmp.Sub("x.tar"));
    ASSERT_TRUE(archive.has_value()) << c.what;
    auto names = Extract(*archive, tmp.Sub("out"));
    EXPECT_EQ(names.error().code(), Code::kInvalidArgument)
        << c.what << ": " << names.error().ToString();
  }
}

TEST(TarTest, CorruptOrTruncatedArchiveIsAborted) {
  TempDir tmp;
  Files files = SampleFiles();
  MakeFiles(tmp.Sub("in"), files);
  std::string archive = Archive(tmp.Sub("in"), files);

  std::string bad_header = archive;
  bad_header[10] ^= 1;  // inside the first header's name
  EXPECT_EQ(Extract(bad_header, tmp.Sub("o1")).error().code(), Code::kAborted);

  std::string truncated = archive.substr(0, archive.size() - kTarTrailerSize - 100);
  EXPECT_EQ(Extract(truncated, tmp.Sub("o2")).error().code(), Code::kAborted);
  EXPECT_EQ(Extract("", tmp.Sub("o3")).error().code(), Code::kAborted);
}

// A decoder fed altered bytes can repeat an earlier, well-formed header. That is a corrupt
// archive, whichever kind of entry it repeats, not a file that happens to exist already.
TEST(TarTest, AnEntryRepeatedInTheArchiveIsAborted) {
  TempDir tmp;
  MakeFiles(tmp.Sub("in"), {{"core-1.img", "core"}, {"pages-1.img", "0123456789"}});
  std::string out;
  StringSink sink(&out);
  TarWriter tar(&sink);
  ASSERT_TRUE(tar.AddFile(tmp.Sub("in"), "core-1.img").ok());
  ASSERT_TRUE(tar.AddFilePart(tmp.Sub("in"), "pages-1.img", 4, 6).ok());
  const std::string entries = out;
  ASSERT_TRUE(tar.Finish().ok());
  const std::string trailer = out.substr(entries.size());
  const std::string core = entries.substr(0, TarEntrySize(4));
  const std::string part = entries.substr(TarEntrySize(4));

  for (const auto& [repeated, archive] :
       {std::pair{std::string("core-1.img"), entries + core + trailer},
        std::pair{TarPartName("pages-1.img", 4), entries + part + trailer}}) {
    const std::string dir = tmp.Sub("out-" + repeated);
    auto extracted = Extract(archive, dir);
    ASSERT_FALSE(extracted.has_value()) << repeated;
    EXPECT_EQ(extracted.error().code(), Code::kAborted) << extracted.error().ToString();
    EXPECT_EQ(extracted.error().message(),
              "tar: entry \"" + repeated + "\" appears twice (corrupt archive)");

    ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("archive"), archive, 0600).ok());
    UniqueFd fd(::open(tmp.Sub("archive").c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    auto listed = ListTarEntries(fd.get());
    ASSERT_FALSE(listed.has_value()) << repeated;
    EXPECT_EQ(listed.error().message(), extracted.error().message());
  }
}

TEST(TarTest, ExistingFileIsNotOverwritten) {
  TempDir tmp;
  Files files = {{"a.img", "new"}};
  MakeFiles(tmp.Sub("in"), files);
  MakeFiles(tmp.Sub("out"), {{"a.img", "old"}});
  EXPECT_EQ(Extract(Archive(tmp.Sub("in"), files), tmp.Sub("out")).error().code(),
            Code::kAlreadyExists);
  EXPECT_EQ(fs::ReadFile(tmp.Sub("out/a.img")).value(), "old");
}

TEST(TarTest, WriterRejectsLongNamesAndMissingFiles) {
  TempDir tmp;
  std::string long_name(kTarMaxNameLength + 1, 'x');
  MakeFiles(tmp.path(), {{long_name, "x"}});
  std::string out;
  StringSink sink(&out);
  TarWriter tar(&sink);
  EXPECT_EQ(tar.AddFile(tmp.path(), long_name).code(), Code::kInvalidArgument);
  EXPECT_EQ(tar.AddFile(tmp.path(), "missing").code(), Code::kNotFound);
  EXPECT_EQ(tar.AddFile(tmp.path(), "../x").code(), Code::kInvalidArgument);
}

TEST(TarTest, PartsLandAtTheirOffsets) {
  TempDir tmp;
  std::string data = "0123456789abcdefghij";
  MakeFiles(tmp.Sub("in"), {{"pages-1.img", data}});
  std::string out;
  StringSink sink(&out);
  TarWriter tar(&sink);
  // Out of order, as parts from different streams may arrive.
  ASSERT_TRUE(tar.AddFilePart(tmp.Sub("in"), "pages-1.img", 12, 8).ok());
  ASSERT_TRUE(tar.AddFilePart(tmp.Sub("in"), "pages-1.img", 0, 12).ok());
  ASSERT_TRUE(tar.Finish().ok());
  std::string other;
  StringSink other_sink(&other);
  EXPECT_EQ(TarWriter(&other_sink).AddFilePart(tmp.Sub("in"), "pages-1.img", 16, 8).code(),
            Code::kAborted)
      << "a part past the end of the file";
  EXPECT_EQ(TarPartName("pages-1.img", 12), "pages-1.img@0000000000000012");

  StringSource source(out);
  TarReader reader(&source);
  ASSERT_TRUE(fs::MakeDirs(tmp.Sub("out")).ok());
  auto names = reader.ExtractAll(tmp.Sub("out"));
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
  EXPECT_EQ(fs::ReadFile(tmp.Sub("out/pages-1.img")).value(), data);
  EXPECT_EQ(fs::ListDir(tmp.Sub("out")).value().size(), 1u);
}

// A stored archive's entries from their headers alone: names, parts' offsets, where each
// header and its bytes are; an archive cut short is an error, not a shorter list.
TEST(TarTest, ListsTheEntriesOfAnArchiveInAFile) {
  TempDir tmp;
  std::string data = "0123456789abcdefghij";
  MakeFiles(tmp.Sub("in"), {{"core-1.img", "core"}, {"pages-1.img", data}});
  std::string out;
  StringSink sink(&out);
  TarWriter tar(&sink);
  ASSERT_TRUE(tar.AddFile(tmp.Sub("in"), "core-1.img").ok());
  ASSERT_TRUE(tar.AddFilePart(tmp.Sub("in"), "pages-1.img", 12, 8).ok());
  ASSERT_TRUE(tar.Finish().ok());
  ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("archive"), out, 0600).ok());
  UniqueFd fd(::open(tmp.Sub("archive").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());

  auto listed = ListTarEntries(fd.get());
  ASSERT_TRUE(listed.has_value()) << listed.error().ToString();
  ASSERT_EQ(listed->size(), 2u);
  const TarListedEntry& core = (*listed)[0];
  EXPECT_EQ(core.header.file, "core-1.img");
  EXPECT_FALSE(core.header.part_offset.has_value());
  EXPECT_EQ(core.header.position, 0u);
  EXPECT_EQ(core.size, 4u);
  const TarListedEntry& part = (*listed)[1];
  EXPECT_EQ(part.header.file, "pages-1.img");
  EXPECT_EQ(part.header.part_offset, std::optional<uint64_t>(12));
  EXPECT_EQ(part.header.position, TarEntrySize(4));
  EXPECT_EQ(part.size, 8u);
  EXPECT_EQ(out.substr(part.header.position + kTarBlockSize, part.size), data.substr(12, 8));

  ASSERT_EQ(::truncate(tmp.Sub("archive").c_str(), static_cast<off_t>(TarEntrySize(4) + 100)), 0);
  auto cut = ListTarEntries(fd.get());
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().code(), Code::kAborted) << cut.error().ToString();
}

TEST(TarTest, LargeUidUsesBase256ThatGnuTarReads) {
  TempDir tmp;
  Files files = {{"a.img", "x"}};
  MakeFiles(tmp.Sub("in"), files);
  constexpr uid_t kBigUid = 3000000;  // more than 7 octal digits
  if (::chown(tmp.Sub("in/a.img").c_str(), kBigUid, kBigUid) != 0) {
    GTEST_SKIP() << "cannot chown (not root)";
  }
  ASSERT_TRUE(fs::WriteFileAtomic(tmp.Sub("a.tar"), Archive(tmp.Sub("in"), files)).ok());
  std::string listing = RunCommand("tar --numeric-owner -tvf " + tmp.Sub("a.tar") + " 2>&1");
  EXPECT_NE(listing.find("3000000/3000000"), std::string::npos) << listing;
  auto names = Extract(fs::ReadFile(tmp.Sub("a.tar")).value(), tmp.Sub("out"));
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
}

}  // namespace
}  // namespace cedana::image
