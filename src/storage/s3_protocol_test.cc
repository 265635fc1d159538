#include "storage/s3_protocol.h"

#include <gtest/gtest.h>

#include "storage/s3_client.h"

namespace cedana::storage::s3 {
namespace {

TEST(S3LocationTest, BucketAndPrefix) {
  auto loc = ParseLocation("s3://my-checkpoints-bucket");
  ASSERT_TRUE(loc.has_value()) << loc.error().ToString();
  EXPECT_EQ(loc->bucket, "my-checkpoints-bucket");
  EXPECT_EQ(loc->prefix, "");
  EXPECT_EQ(loc->Key("a/b"), "a/b");
  EXPECT_EQ(loc->Describe(), "s3://my-checkpoints-bucket");

  loc = ParseLocation("s3://bucket/team/ckpt/");
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->prefix, "team/ckpt");
  EXPECT_EQ(loc->Key("a/b"), "team/ckpt/a/b");
  EXPECT_EQ(loc->Key(""), "team/ckpt/");
  EXPECT_EQ(loc->Describe(), "s3://bucket/team/ckpt");
}

TEST(S3LocationTest, BadBucketNamesSayWhatIsValid) {
  for (const char* url : {"s3://", "s3://ab", "s3://Upper", "s3://-dash", "s3://a..b", "s3://a_b",
                          "s3://bucket/a//b", "http://bucket"}) {
    auto loc = ParseLocation(url);
    ASSERT_FALSE(loc.has_value()) << url;
    EXPECT_EQ(loc.error().code(), Code::kInvalidArgument) << url;
  }
  EXPECT_NE(ParseLocation("s3://Upper").error().message().find("3 to 63 characters"),
            std::string::npos);
}

TEST(S3EndpointTest, AwsIsVirtualHostedUnlessTheBucketHasDots) {
  auto e = ResolveEndpoint("", "eu-west-1", S3Addressing::kAuto, "bkt");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(ObjectUrl(*e, "bkt", "a/b c"), "https://bkt.s3.eu-west-1.amazonaws.com/a/b%20c");
  e = ResolveEndpoint("", "eu-west-1", S3Addressing::kAuto, "my.bkt");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(ObjectUrl(*e, "my.bkt", "k"), "https://s3.eu-west-1.amazonaws.com/my.bkt/k");
}

TEST(S3EndpointTest, CustomEndpointIsPathStyleByDefault) {
  auto e = ResolveEndpoint("http://127.0.0.1:7480/", "us-east-1", S3Addressing::kAuto, "bkt");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(ObjectUrl(*e, "bkt", "p/manifest.json"), "http://127.0.0.1:7480/bkt/p/manifest.json");
  EXPECT_EQ(ObjectUrl(*e, "bkt", "", {{"list-type", "2"}, {"prefix", "p/"}}),
            "http://127.0.0.1:7480/bkt?list-type=2&prefix=p%2F");

  e = ResolveEndpoint("http://localhost:7480/base", "us-east-1", S3Addressing::kVirtual, "bkt");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(ObjectUrl(*e, "bkt", "k"), "http://bkt.localhost:7480/base/k");
  EXPECT_EQ(ObjectUrl(*e, "bkt", "", {{"uploads", ""}}),
            "http://bkt.localhost:7480/base/?uploads=");
}

TEST(S3EndpointTest, BadEndpointsAreRefused) {
  EXPECT_FALSE(ResolveEndpoint("127.0.0.1:7480", "r", S3Addressing::kAuto, "b").has_value());
  EXPECT_FALSE(ResolveEndpoint("ftp://host", "r", S3Addressing::kAuto, "b").has_value());
  EXPECT_FALSE(ResolveEndpoint("http://", "r", S3Addressing::kAuto, "b").has_value());
}

TEST(S3QueryTest, CanonicalFormIsSortedAndEncoded) {
  EXPECT_EQ(CanonicalQuery({{"uploadId", "a/b+c="}, {"partNumber", "7"}}),
            "partNumber=7&uploadId=a%2Fb%2Bc%3D");
  EXPECT_EQ(CanonicalQuery({{"uploads", ""}}), "uploads=");
  EXPECT_EQ(UriEncode("a b~/é", true), "a%20b~/%C3%A9");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
}

TEST(S3XmlTest, ListPagesAndErrors) {
  const char* page =
      "<ListBucketResult><IsTruncated>true</IsTruncated>"
      "<Contents><Key>p/root/l/1/manifest.json</Key><Size>10</Size></Contents>"
      "<Contents><Key>p/a&amp;b/x</Key></Contents>"
      "<NextContinuationToken>tok&#x2F;1</NextContinuationToken></ListBucketResult>";
  ListPage p = ParseListPage(page);
  ASSERT_EQ(p.keys.size(), 2u);
  EXPECT_EQ(p.keys[1], "p/a&b/x");
  EXPECT_EQ(p.next_token, "tok/1");
  EXPECT_EQ(ParseListPage("<IsTruncated>false</IsTruncated>").next_token, "");
  EXPECT_EQ(XmlValue("<Error><Code>NoSuchBucket</Code></Error>", "Code"), "NoSuchBucket");
  EXPECT_EQ(XmlValue("<Error/>", "Code"), "");
}

TEST(S3XmlTest, CompleteMultipartListsPartsInOrder) {
  EXPECT_EQ(CompleteMultipartXml({"\"e1\"", "\"e2\""}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag>"
            "</Part><Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
            "</CompleteMultipartUpload>");
}

TEST(S3RetryTest, ServerErrorsAndThrottlingAreRetried) {
  EXPECT_TRUE(IsRetryableHttp(500, "InternalError"));
  EXPECT_TRUE(IsRetryableHttp(503, "SlowDown"));
  EXPECT_TRUE(IsRetryableHttp(429, ""));
  EXPECT_TRUE(IsRetryableHttp(400, "RequestTimeout"));
  EXPECT_FALSE(IsRetryableHttp(403, "SignatureDoesNotMatch"));
  EXPECT_FALSE(IsRetryableHttp(404, "NoSuchKey"));
}

}  // namespace
}  // namespace cedana::storage::s3
