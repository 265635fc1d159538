#include "engine/criu_client.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

namespace cedana::engine {
namespace {

TEST(CriuClientTest, MissingConfiguredBinaryIsNotFound) {
  auto r = CriuClient::Create({"/nonexistent/criu", std::chrono::seconds(5), false});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_NE(r.error().message().find("/nonexistent/criu"), std::string::npos);
}

TEST(CriuClientTest, ABinaryThatIsNotCriuFails) {
  // /bin/true exits at once without answering the RPC request.
  auto r = CriuClient::Create({"/bin/true", std::chrono::seconds(5), false});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
}

TEST(CriuClientTest, AHangingBinaryHitsTheDeadline) {
  std::string path = ::testing::TempDir() + "/hanging-criu";
  std::ofstream(path) << "#!/bin/sh\nexec sleep 30\n";
  ::chmod(path.c_str(), 0755);
  auto start = std::chrono::steady_clock::now();
  auto r = CriuClient::Create({path, std::chrono::seconds(1), false});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kDeadlineExceeded);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(CriuClientTest, LogTailKeepsTheLastLines) {
  std::string path = ::testing::TempDir() + "/criu.log";
  {
    std::ofstream out(path);
    for (int i = 0; i < 30; ++i) out << "line " << i << "\n";
  }
  EXPECT_EQ(LogTail(path, 2), "line 28\nline 29\n");
  EXPECT_EQ(LogTail("/nonexistent.log"), "");
}

}  // namespace
}  // namespace cedana::engine
