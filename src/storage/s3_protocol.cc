#include "storage/s3_protocol.h"

#include <fmt/format.h>

namespace cedana::storage::s3 {
namespace {

bool IsBucketChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

Status CheckBucket(std::string_view bucket) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError(fmt::format(
        "S3 bucket name \"{}\" {} (valid: 3 to 63 characters of a-z, 0-9, '.' and '-', starting "
        "and ending with a letter or digit)",
        bucket, why));
  };
  if (bucket.size() < 3 || bucket.size() > 63) return bad("has a wrong length");
  for (char c : bucket)
    if (!IsBucketChar(c)) return bad("has a character that is not allowed");
  if (!IsAlnumLower(bucket.front()) || !IsAlnumLower(bucket.back()))
    return bad("must start and end with a letter or digit");
  if (bucket.find("..") != std::string_view::npos) return bad("has two dots in a row");
  return OkStatus();
}

std::string_view TrimSlashes(std::string_view s) {
  while (!s.empty() && s.front() == '/') s.remove_prefix(1);
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  return s;
}

std::string DecodeEntities(std::string_view s) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (s[i] == '&') {
      for (const auto& [name, c] : kEntities) {
        if (s.substr(i, name.size()) == name) {
          out += c;
          i += name.size();
          replaced = true;
          break;
        }
      }
      if (!replaced && s.substr(i, 2) == "&#") {  // numeric, ASCII range is all S3 keys need
        size_t end = s.find(';', i);
        if (end != std::string_view::npos) {
          bool hex = i + 2 < end && (s[i + 2] == 'x' || s[i + 2] == 'X');
          std::string digits(s.substr(i + (hex ? 3 : 2), end - i - (hex ? 3 : 2)));
          try {
            out += static_cast<char>(std::stoi(digits, nullptr, hex ? 16 : 10));
            i = end + 1;
            replaced = true;
          } catch (const std::exception&) {
          }
        }
      }
    }
    if (!replaced) out += s[i++];
  }
  return out;
}

}  // namespace

Result<Location> ParseLocation(std::string_view url) {
  constexpr std::string_view kScheme = "s3://";
  if (url.substr(0, kScheme.size()) != kScheme)
    return InvalidArgumentError(fmt::format("\"{}\" is not an s3://bucket[/prefix] location", url));
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find('/');
  Location loc;
  loc.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) loc.prefix = std::string(TrimSlashes(rest.substr(slash)));
  CEDANA_RETURN_IF_ERROR(CheckBucket(loc.bucket)) << "checkpoint dir " << url;
  if (loc.prefix.find("//") != std::string::npos)
    return InvalidArgumentError(
        fmt::format("checkpoint dir {}: the prefix has an empty path "
                    "segment (\"//\")",
                    url));
  return loc;
}

Result<Endpoint> ResolveEndpoint(const std::string& endpoint_url, const std::string& region,
                                 S3Addressing addressing, const std::string& bucket) {
  Endpoint e;
  bool aws = endpoint_url.empty();
  if (aws) {
    e.scheme = "https";
    e.authority = "s3." + region + ".amazonaws.com";
  } else {
    size_t sep = endpoint_url.find("://");
    if (sep == std::string::npos)
      return InvalidArgumentError("S3 endpoint URL \"" + endpoint_url +
                                  "\" has no scheme (want http:// or https://)");
    e.scheme = endpoint_url.substr(0, sep);
    if (e.scheme != "http" && e.scheme != "https")
      return InvalidArgumentError("S3 endpoint URL \"" + endpoint_url +
                                  "\" has an unsupported scheme (want http:// or https://)");
    std::string_view rest = std::string_view(endpoint_url).substr(sep + 3);
    size_t slash = rest.find('/');
    e.authority = std::string(rest.substr(0, slash));
    if (slash != std::string_view::npos) {
      std::string_view base = TrimSlashes(rest.substr(slash));
      if (!base.empty()) e.base_path = "/" + std::string(base);
    }
    if (e.authority.empty())
      return InvalidArgumentError("S3 endpoint URL \"" + endpoint_url + "\" has no host");
  }
  if (addressing == S3Addressing::kVirtual) e.virtual_host = true;
  else if (addressing == S3Addressing::kAuto)
    e.virtual_host = aws && bucket.find('.') == std::string::npos;
  if (e.virtual_host) e.authority = bucket + "." + e.authority;
  return e;
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

std::string CanonicalQuery(const std::map<std::string, std::string>& params) {
  std::map<std::string, std::string> encoded;  // sorted by the encoded key, as SigV4 wants
  for (const auto& [k, v] : params) encoded[UriEncode(k, false)] = UriEncode(v, false);
  std::string out;
  for (const auto& [k, v] : encoded) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

std::string ObjectUrl(const Endpoint& endpoint, const std::string& bucket, const std::string& key,
                      const std::map<std::string, std::string>& query) {
  std::string path = endpoint.base_path;
  if (!endpoint.virtual_host) path += "/" + bucket;
  if (!key.empty() || endpoint.virtual_host) path += "/" + UriEncode(key, true);
  std::string url = endpoint.scheme + "://" + endpoint.authority + path;
  if (!query.empty()) url += "?" + CanonicalQuery(query);
  return url;
}

std::vector<std::string> XmlValues(std::string_view xml, std::string_view tag) {
  std::vector<std::string> out;
  const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  size_t pos = 0;
  for (;;) {
    size_t start = xml.find(open, pos);
    if (start == std::string_view::npos) break;
    start += open.size();
    size_t end = xml.find(close, start);
    if (end == std::string_view::npos) break;
    out.push_back(DecodeEntities(xml.substr(start, end - start)));
    pos = end + close.size();
  }
  return out;
}

std::string XmlValue(std::string_view xml, std::string_view tag) {
  auto values = XmlValues(xml, tag);
  return values.empty() ? std::string() : values.front();
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string CompleteMultipartXml(const std::vector<std::string>& etags) {
  std::string xml = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i) {
    xml += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1,
                       XmlEscape(etags[i]));
  }
  return xml + "</CompleteMultipartUpload>";
}

ListPage ParseListPage(std::string_view xml) {
  ListPage page;
  page.keys = XmlValues(xml, "Key");
  if (XmlValue(xml, "IsTruncated") == "true")
    page.next_token = XmlValue(xml, "NextContinuationToken");
  return page;
}

}  // namespace cedana::storage::s3
