// The pure parts of the S3 REST protocol: where a bucket and key live (s3:// locations,
// path-style or virtual-host addressing), the canonical encoding SigV4 signs (URI paths, sorted
// query strings), and the few XML documents S3 speaks. No I/O, so all of it is unit-tested.
// Signing itself is libcurl's (CURLOPT_AWS_SIGV4); see s3_client.h.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/result.h"

namespace cedana::storage::s3 {

// s3://bucket[/prefix]: the checkpoint dir in a bucket.
struct Location {
  std::string bucket;
  std::string prefix;  // without leading or trailing '/'; may be empty

  std::string Describe() const { return "s3://" + bucket + (prefix.empty() ? "" : "/" + prefix); }
  // The object key of `path` (relative to the checkpoint dir).
  std::string Key(std::string_view path) const {
    return prefix.empty() ? std::string(path) : prefix + "/" + std::string(path);
  }
};

// Parses "s3://bucket[/prefix]". kInvalidArgument naming what is wrong: a bucket name must be
// 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit.
Result<Location> ParseLocation(std::string_view url);

// Where requests go: scheme://host[:port] plus, for path-style, the bucket in the path.
struct Endpoint {
  std::string scheme;     // "https" or "http"
  std::string authority;  // host[:port], with the bucket in front for virtual-host style
  std::string base_path;  // "" or "/base" (an endpoint URL's own path), no trailing '/'
  bool virtual_host = false;
};

// Resolves the endpoint of `bucket`. endpoint_url "" means AWS S3 in `region`. kAuto addressing
// is virtual for AWS (path for bucket names with dots, which a wildcard
// TLS certificate does not cover) and path for other endpoints.
Result<Endpoint> ResolveEndpoint(const std::string& endpoint_url, const std::string& region,
                                 S3Addressing addressing, const std::string& bucket);

// RFC 3986 percent-encoding of everything but unreserved characters (and '/' when keep_slash),
// as SigV4's canonical URI and query string want it.
std::string UriEncode(std::string_view text, bool keep_slash);

// key=value pairs sorted by key, each encoded, empty values as "key=" (SigV4 canonical form;
// libcurl signs the query string as given).
std::string CanonicalQuery(const std::map<std::string, std::string>& params);

// The URL of `key` in `bucket` ("" key: the bucket itself), with `query` appended.
std::string ObjectUrl(const Endpoint& endpoint, const std::string& bucket, const std::string& key,
                      const std::map<std::string, std::string>& query = {});

// Text of every <tag>...</tag> element, entities decoded. Enough for S3's flat answers
// (ListObjectsV2, InitiateMultipartUpload, Error); not a general XML parser.
std::vector<std::string> XmlValues(std::string_view xml, std::string_view tag);
// The first such value, or "".
std::string XmlValue(std::string_view xml, std::string_view tag);
std::string XmlEscape(std::string_view text);

// The CompleteMultipartUpload body for parts 1..N with these ETags.
std::string CompleteMultipartXml(const std::vector<std::string>& etags);

// One page of ListObjectsV2.
struct ListPage {
  std::vector<std::string> keys;
  std::string next_token;  // "" on the last page
};
ListPage ParseListPage(std::string_view xml);

}  // namespace cedana::storage::s3
