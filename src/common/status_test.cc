#include "common/status.h"

#include <gtest/gtest.h>

#include "common/result.h"

namespace cedana {
namespace {

Status Fails() { return NotFoundError("thing"); }
Status Propagates() {
  CEDANA_RETURN_IF_ERROR(Fails()) << "loading " << 42;
  return OkStatus();
}
Result<int> Half(int x) {
  if (x % 2) return InvalidArgumentError("odd");
  return x / 2;
}
Result<int> Quarter(int x) {
  CEDANA_ASSIGN_OR_RETURN(int h, Half(x));
  CEDANA_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, ContextIsPrepended) {
  Status s = Propagates();
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "loading 42: thing");
  EXPECT_EQ(s.ToString(), "not found: loading 42: thing");
}

TEST(StatusTest, AssignOrReturn) {
  EXPECT_EQ(Quarter(8).value(), 2);
  EXPECT_EQ(Quarter(3).error().code(), Code::kInvalidArgument);
  EXPECT_EQ(Quarter(6).error().message(), "odd");
}

TEST(StatusTest, ErrnoMapping) {
  struct Case {
    int err;
    Code code;
  } cases[] = {{ENOENT, Code::kNotFound},          {EACCES, Code::kPermissionDenied},
               {EEXIST, Code::kAlreadyExists},     {ENOSPC, Code::kFailedPrecondition},
               {ECONNREFUSED, Code::kUnavailable}, {EIO, Code::kInternal}};
  for (const auto& c : cases) {
    Status s = ErrnoStatus(c.err, "op");
    EXPECT_EQ(s.code(), c.code) << c.err;
    EXPECT_EQ(s.error_number(), c.err);
    EXPECT_EQ(s.message().rfind("op: ", 0), 0u);
  }
}

TEST(StatusTest, ResultFromOkStatusIsAnError) {
  Result<int> r = OkStatus();
  EXPECT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kInternal);
}

}  // namespace
}  // namespace cedana
