#include "controller/http/api_json.h"

#include <gtest/gtest.h>

#include "controller/http/api_server.h"

namespace cedana::controller {
namespace {

TEST(ApiJsonTest, PolicyBodiesAreValidatedFieldByField) {
  struct Case {
    const char* body;
    const char* want;  // substring of the error; "" = valid
  } cases[] = {
      {R"({"name":"p","interval_seconds":60})", ""},
      {R"({"name":"p","interval_seconds":60,"selector":{"label":"x","job_id":"12"},"max_checkpoints":3})",
       ""},
      {R"({"interval_seconds":60})", "policy name is missing"},
      {R"({"name":"","interval_seconds":60})", "1 to 64 characters"},
      {R"({"name":"a/b","interval_seconds":60})", "use letters, digits"},
      {R"({"name":"p"})", "interval_seconds is missing"},
      {R"({"name":"p","interval_seconds":5})", "valid: 10 to 2592000"},
      {R"({"name":"p","interval_seconds":60,"max_checkpoints":0})", "max_checkpoints"},
      {R"({"name":"p","interval_seconds":60,"selector":{"node":"x"}})",
       "unknown selector key \"node\""},
      {R"({"name":"p","interval_seconds":60,"selector":"x"})", "selector must be an object"},
      {R"({"name":"p","interval_seconds":60,"selector":{"node":null}})",
       "unknown selector key \"node\""},
      {R"({"name":"p","interval_seconds":60,"selector":{"job_id":"12abc"}})",
       "positive job number"},
      {R"({"name":"p","interval_seconds":60,"selector":{"job_id":-3}})", "positive job number"},
  };
  for (const auto& c : cases) {
    auto p = PolicyFromJson(nlohmann::json::parse(c.body));
    if (std::string(c.want).empty()) {
      EXPECT_TRUE(p.has_value()) << c.body << ": " << p.error().ToString();
    } else {
      ASSERT_FALSE(p.has_value()) << c.body;
      EXPECT_EQ(p.error().code(), Code::kInvalidArgument);
      EXPECT_NE(p.error().message().find(c.want), std::string::npos) << p.error().message();
    }
  }
}

TEST(ApiJsonTest, StatusCodesMapToHttp) {
  EXPECT_EQ(ApiServer::HttpStatusOf(Code::kInvalidArgument), 400);
  EXPECT_EQ(ApiServer::HttpStatusOf(Code::kPermissionDenied), 403);
  EXPECT_EQ(ApiServer::HttpStatusOf(Code::kNotFound), 404);
  EXPECT_EQ(ApiServer::HttpStatusOf(Code::kAlreadyExists), 409);
  EXPECT_EQ(ApiServer::HttpStatusOf(Code::kUnavailable), 503);
  EXPECT_EQ(ErrorBody(NotFoundError("x"))["error"]["code"], "not_found");
  EXPECT_EQ(ApiServer::HttpStatusOf(Code::kInternal), 500);
}

// A failed statement is our bug: the caller learns that, the controller's log gets the SQL.
TEST(ApiJsonTest, AnInternalErrorKeepsItsDetailsForTheLog) {
  nlohmann::json body =
      ErrorBody(InternalError("sqlite: no such column: hash in: SELECT id FROM tokens"));
  const std::string message = body["error"]["message"];
  EXPECT_EQ(message.find("SELECT"), std::string::npos) << message;
  EXPECT_NE(message.find("log"), std::string::npos) << message;
  EXPECT_EQ(ErrorBody(InvalidArgumentError("limit must be 1-500"))["error"]["message"],
            "limit must be 1-500");
}

TEST(ApiJsonTest, CheckpointJsonLeavesTheWorkloadOut) {
  CheckpointRecord c;
  c.id = "x";
  c.manifest = R"({"id":"x","workload":{"argv":["secret"]},"mac":"m"})";
  auto j = ToJson(c, true);
  EXPECT_EQ(j["manifest"]["mac"], "m");
  EXPECT_FALSE(j["manifest"].contains("workload"));
  EXPECT_FALSE(ToJson(c, false).contains("manifest"));
}

}  // namespace
}  // namespace cedana::controller
