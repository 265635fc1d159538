#include "image/image_creds.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "image/core_image_for_test.h"

namespace cedana::image {
namespace {

using fixtures::BytesField;
using fixtures::CoreImage;
using fixtures::Creds;
using fixtures::U32;
using fixtures::VarintField;

// The owner's groups now (getgrouplist): primary 1000, plus 27 and 100.
const std::vector<gid_t> kOwnerGroups = {1000, 27, 100};

class ImageCredsTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/image-creds-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)fs::RemoveTree(dir_); }
  void Write(const std::string& name, const std::string& data) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << data;
  }
  std::string dir_;
};

TEST_F(ImageCredsTest, ReadsEveryTasksCredentials) {
  Write("core-10.img", CoreImage({}));
  Creds child;
  child.groups = {27, 100};
  Write("core-11.img", CoreImage(child));
  Write("pagemap-10.img", "not a core image");
  auto creds = ReadImageCreds(dir_);
  ASSERT_TRUE(creds.has_value()) << creds.error().ToString();
  ASSERT_EQ(creds->size(), 2u);
  for (const auto& c : *creds) {
    EXPECT_EQ(c.uid, 1000u);
    EXPECT_EQ(c.egid, 1000u);
    EXPECT_FALSE(c.has_capabilities);
  }
  EXPECT_TRUE(CheckCredsOfOwner(*creds, 1000, 1000, kOwnerGroups).ok());
}

TEST_F(ImageCredsTest, RefusesASetuidTaskForAUser) {
  Creds su;
  su.euid = 0;
  Write("core-12.img", CoreImage(su));
  auto creds = ReadImageCreds(dir_);
  ASSERT_TRUE(creds.has_value());
  Status s = CheckCredsOfOwner(*creds, 1000, 1000, kOwnerGroups);
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_NE(s.message().find("core-12.img runs with uid 0"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckCredsOfOwner(*creds, 0, 0, {}).ok()) << "root's own trees may hold anything";
}

TEST_F(ImageCredsTest, RefusesForeignGroupsAndCapabilities) {
  Creds sg;
  sg.egid = 42;
  sg.groups = {27};
  Write("core-13.img", CoreImage(sg));
  auto creds = ReadImageCreds(dir_);
  ASSERT_TRUE(creds.has_value());
  EXPECT_NE(CheckCredsOfOwner(*creds, 1000, 1000, kOwnerGroups).message().find("gid 42"),
            std::string::npos);

  Creds member;
  member.egid = 27;
  member.groups = {27};
  Write("core-13.img", CoreImage(member));
  EXPECT_TRUE(CheckCredsOfOwner(*ReadImageCreds(dir_), 1000, 1000, kOwnerGroups).ok())
      << "a group its owner is in";
  EXPECT_NE(CheckCredsOfOwner(*ReadImageCreds(dir_), 1000, 1000, {1000}).message().find("gid 27"),
            std::string::npos)
      << "the task's own list does not make a group the owner's";

  Creds extra;
  extra.groups = {27, 4242};
  Write("core-13.img", CoreImage(extra));
  EXPECT_NE(CheckCredsOfOwner(*ReadImageCreds(dir_), 1000, 1000, kOwnerGroups)
                .message()
                .find("supplementary group 4242"),
            std::string::npos);

  Creds caps;
  caps.cap_eff = {0, 1u << 7};
  Write("core-13.img", CoreImage(caps));
  EXPECT_NE(CheckCredsOfOwner(*ReadImageCreds(dir_), 1000, 1000, kOwnerGroups)
                .message()
                .find("capabilities"),
            std::string::npos);
  for (auto set : {&Creds::cap_inh, &Creds::cap_amb}) {
    Creds c;
    (c.*set) = {1u << 12};
    Write("core-13.img", CoreImage(c));
    EXPECT_NE(CheckCredsOfOwner(*ReadImageCreds(dir_), 1000, 1000, kOwnerGroups)
                  .message()
                  .find("capabilities"),
              std::string::npos)
        << "inheritable and ambient capabilities count";
  }
}

// A task in a namespace the rest of the tree is not in made it (inside a user namespace, as an
// unprivileged user can): a root restore would create it as root.
TEST_F(ImageCredsTest, RefusesATaskInANamespaceOfItsOwn) {
  Write("core-10.img", CoreImage({}));
  Creds other;
  other.net_ns = 0xf0000099;
  Write("core-11.img", CoreImage(other));
  auto creds = ReadImageCreds(dir_);
  ASSERT_TRUE(creds.has_value()) << creds.error().ToString();
  Status s = CheckCredsOfOwner(*creds, 1000, 1000, kOwnerGroups);
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_NE(s.message().find("net namespace of its own"), std::string::npos) << s.message();
  Write("core-11.img", CoreImage({}));
  EXPECT_TRUE(CheckCredsOfOwner(*ReadImageCreds(dir_), 1000, 1000, kOwnerGroups).ok());
}

// A zombie's core has task_core_entry (field 3) with task_state 2 (TASK_DEAD) and no thread
// core: it is skipped. A live task without credentials is still an error.
TEST_F(ImageCredsTest, ZombiesHaveNoCredentialsAndAreSkipped) {
  auto core_of = [](uint64_t state) {
    std::string core = VarintField(1, 1) + BytesField(3, VarintField(1, state) + VarintField(2, 0));
    return U32(0x54564319) + U32(0x55053847) + U32(static_cast<uint32_t>(core.size())) + core;
  };
  Write("core-10.img", CoreImage({}));
  Write("core-47.img", core_of(2));
  auto creds = ReadImageCreds(dir_);
  ASSERT_TRUE(creds.has_value()) << creds.error().ToString();
  ASSERT_EQ(creds->size(), 1u);
  EXPECT_EQ(creds->front().image, "core-10.img");
  Write("core-47.img", core_of(1));
  auto live = ReadImageCreds(dir_);
  ASSERT_FALSE(live.has_value());
  EXPECT_NE(live.error().message().find("no credentials"), std::string::npos);
  // Fail closed for a user's tree; root's trees are not read at all.
  EXPECT_FALSE(CheckImagesOwnedBy(dir_, 1000, 1000).ok());
  EXPECT_TRUE(CheckImagesOwnedBy(dir_, 0, 0).ok());
}

TEST_F(ImageCredsTest, MalformedImagesAreErrorsNotCrashes) {
  EXPECT_FALSE(ReadImageCreds(dir_).has_value()) << "no core image at all";
  std::string good = CoreImage({});
  for (size_t cut : {0ul, 4ul, 11ul, 12ul, good.size() / 2, good.size() - 1}) {
    Write("core-14.img", good.substr(0, cut));
    EXPECT_FALSE(ReadImageCreds(dir_).has_value()) << "cut at " << cut;
  }
  std::string garbage = good;
  for (size_t i = 12; i < garbage.size(); ++i) garbage[i] = static_cast<char>(0xff);
  Write("core-14.img", garbage);
  EXPECT_FALSE(ReadImageCreds(dir_).has_value());
}

}  // namespace
}  // namespace cedana::image
