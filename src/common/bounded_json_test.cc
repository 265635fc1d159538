#include "common/bounded_json.h"

#include <string>

#include <gtest/gtest.h>

namespace cedana {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(BoundedJsonTest, AcceptsNestingUpToTheLimit) {
  Result<nlohmann::json> j = ParseBoundedJson(Nested(kMaxJsonDepth));
  ASSERT_TRUE(j.has_value()) << j.error().ToString();
  EXPECT_TRUE(j->is_array());
}

TEST(BoundedJsonTest, RefusesDeeperNesting) {
  EXPECT_EQ(ParseBoundedJson(Nested(kMaxJsonDepth + 1)).error().code(), Code::kInvalidArgument);
  // Deep enough to overflow the stack of a recursive copy or dump.
  Result<nlohmann::json> deep = ParseBoundedJson(R"({"a":)" + Nested(300000) + "}");
  ASSERT_FALSE(deep.has_value());
  EXPECT_EQ(deep.error().code(), Code::kInvalidArgument);
  EXPECT_NE(deep.error().message().find("nested deeper"), std::string::npos);
}

TEST(BoundedJsonTest, RefusesInvalidJson) {
  EXPECT_EQ(ParseBoundedJson("{\"a\":").error().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseBoundedJson("").error().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cedana
