#include "storage/s3_client.h"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "common/hex.h"
#include "common/log.h"

namespace cedana::storage::s3 {

struct Client::Request {
  const char* method = "GET";  // GET PUT POST HEAD DELETE
  std::string key;
  std::map<std::string, std::string> query;
  std::string_view body;
  std::vector<std::string> headers;
  std::string* out = nullptr;  // the response body goes here instead of Response::body
};

struct Client::Response {
  long status = 0;
  std::string body;
  std::string etag;
  curl_off_t content_length = -1;
};

// Idle curl handles. A handle keeps its connections open, so reusing it saves the TCP (and TLS)
// handshake of every part.
class Client::HandlePool {
 public:
  ~HandlePool() {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }
  CURL* Get() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    return curl_easy_init();
  }
  void Put(CURL* h) {
    curl_easy_reset(h);  // options go, connections stay
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<CURL*> idle_;
};

namespace {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

struct UploadCursor {
  std::string_view rest;
};

size_t ReadBody(char* buffer, size_t size, size_t count, void* user) {
  auto* cursor = static_cast<UploadCursor*>(user);
  size_t n = std::min(size * count, cursor->rest.size());
  std::memcpy(buffer, cursor->rest.data(), n);
  cursor->rest.remove_prefix(n);
  return n;
}

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t ReadHeader(char* data, size_t size, size_t count, void* user) {
  std::string_view line(data, size * count);
  constexpr std::string_view kEtag = "etag:";
  if (line.size() > kEtag.size()) {
    std::string name(line.substr(0, kEtag.size()));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if (name == kEtag) {
      std::string_view v = line.substr(kEtag.size());
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' '))
        v.remove_suffix(1);
      *static_cast<std::string*>(user) = std::string(v);
    }
  }
  return size * count;
}

bool IsRetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_LOGIN_DENIED:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_ABORTED_BY_CALLBACK: return false;
    default: return true;
  }
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// 0.25 s, 0.5 s, 1 s ... capped at 8 s, with jitter so parallel streams do not retry in step.
std::chrono::milliseconds Backoff(int attempt) {
  thread_local std::mt19937 rng(std::random_device{}());
  int base = std::min(250 << std::min(attempt, 5), 8000);
  return std::chrono::milliseconds(base / 2 + std::uniform_int_distribution<int>(0, base / 2)(rng));
}

}  // namespace

bool IsRetryableHttp(long status, std::string_view s3_code) {
  return status >= 500 || status == 429 || s3_code == "RequestTimeout" || s3_code == "SlowDown";
}

Result<std::shared_ptr<Client>> Client::Create(S3Config settings, std::string bucket) {
  if (settings.access_key_id.empty() || settings.secret_access_key.empty()) {
    return InvalidArgumentError(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or s3.access_key_id "
        "and s3.secret_access_key in the config file) for the node daemon");
  }
  if (settings.region.empty()) settings.region = "us-east-1";
  settings.max_attempts = std::max(1, settings.max_attempts);
  CEDANA_ASSIGN_OR_RETURN(Endpoint endpoint, ResolveEndpoint(settings.endpoint_url, settings.region,
                                                             settings.addressing, bucket));
  GlobalInit();
  return std::shared_ptr<Client>(new Client(std::move(settings), std::move(bucket), endpoint));
}

Client::Client(S3Config settings, std::string bucket, Endpoint endpoint)
    : settings_(std::move(settings)),
      bucket_(std::move(bucket)),
      endpoint_(std::move(endpoint)),
      handles_(std::make_unique<HandlePool>()) {}

Client::~Client() = default;

std::string Client::Describe() const {
  return fmt::format("bucket {} at {}", bucket_,
                     settings_.endpoint_url.empty() ? "AWS S3 (" + settings_.region + ")"
                                                    : settings_.endpoint_url);
}

Result<Client::Response> Client::Send(const Request& req) {
  CURL* h = handles_->Get();
  if (h == nullptr) return InternalError("curl_easy_init failed");
  struct Return {
    HandlePool* pool;
    CURL* h;
    ~Return() { pool->Put(h); }
  } give_back{handles_.get(), h};

  std::string url = ObjectUrl(endpoint_, bucket_, req.key, req.query);
  std::string sigv4 = "aws:amz:" + settings_.region + ":s3";
  curl_slist* headers = nullptr;
  struct FreeHeaders {
    curl_slist** list;
    ~FreeHeaders() { curl_slist_free_all(*list); }
  } free_headers{&headers};
  // libcurl signs this header's value as the payload hash (it cannot hash a streamed body).
  headers = curl_slist_append(headers, ("x-amz-content-sha256: " + Sha256Hex(req.body)).c_str());
  if (!settings_.session_token.empty())
    headers =
        curl_slist_append(headers, ("x-amz-security-token: " + settings_.session_token).c_str());
  for (const std::string& extra : req.headers) headers = curl_slist_append(headers, extra.c_str());

  Response resp;
  UploadCursor cursor{req.body};
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(h, CURLOPT_USERNAME, settings_.access_key_id.c_str());
  curl_easy_setopt(h, CURLOPT_PASSWORD, settings_.secret_access_key.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  // A transfer that moves less than 1 KiB/s for 60 s is stuck (a dead peer without RST).
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, req.out != nullptr ? req.out : &resp.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, ReadHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp.etag);
  std::string_view method = req.method;
  if (method == "PUT") {
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(h, CURLOPT_READDATA, &cursor);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (method == "POST") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (method != "GET") {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);

  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK) {
    std::string what = error[0] != '\0' ? error : curl_easy_strerror(rc);
    Status s = IsRetryableCurl(rc) ? UnavailableError(what) : FailedPreconditionError(what);
    return s.WithContext(fmt::format("S3 {} {}", req.method, url));
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &resp.content_length);
  // The error's XML; copied, so that the caller keeps its buffer to reuse.
  if (req.out != nullptr && resp.status >= 300) resp.body = *req.out;
  return resp;
}

Result<Client::Response> Client::Perform(const Request& req) {
  for (int attempt = 1;; ++attempt) {
    if (req.out != nullptr) req.out->clear();
    Result<Response> resp = Send(req);
    bool retry;
    Status failure;
    if (!resp.has_value()) {
      failure = resp.error();
      retry = failure.code() == Code::kUnavailable;
    } else if (resp->status < 300) {
      return resp;
    } else {
      failure = ErrorOf(req, *resp);
      retry = IsRetryableHttp(resp->status, XmlValue(resp->body, "Code"));
    }
    if (!retry || attempt >= settings_.max_attempts) {
      if (retry) failure = failure.WithContext(fmt::format("after {} attempts", attempt));
      return failure;
    }
    auto pause = Backoff(attempt - 1);
    log::Warn("s3: {} (attempt {} of {}, again in {} ms)", failure.ToString(), attempt,
              settings_.max_attempts, pause.count());
    std::this_thread::sleep_for(pause);
  }
}

Status Client::ErrorOf(const Request& req, const Response& resp) const {
  std::string code = XmlValue(resp.body, "Code");
  std::string message = XmlValue(resp.body, "Message");
  std::string detail = code.empty() ? fmt::format("HTTP {}", resp.status)
                                    : fmt::format("HTTP {} {}", resp.status, code);
  if (!message.empty()) detail += ": " + message;
  std::string object = req.key.empty() ? Describe() : fmt::format("{} in {}", req.key, Describe());
  if (resp.status == 403 || resp.status == 401) {
    return PermissionDeniedError(fmt::format(
        "S3 refused {} {} ({}); check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or "
        "s3.access_key_id/s3.secret_access_key), s3.region and the bucket policy",
        req.method, object, detail));
  }
  if (code == "NoSuchBucket") {  // not kNotFound: that means a missing key
    return FailedPreconditionError(fmt::format("{} does not exist ({})", Describe(), detail));
  }
  if (resp.status == 404) {
    return NotFoundError(fmt::format("{} not found ({})", object, detail));
  }
  if (resp.status == 412) {
    return AbortedError(fmt::format("{} changed while it was read ({})", object, detail));
  }
  Code c =
      resp.status >= 500 || resp.status == 429 ? Code::kUnavailable : Code::kFailedPrecondition;
  return Status(c, fmt::format("S3 {} {}: {}", req.method, object, detail));
}

Status Client::PutObject(const std::string& key, std::string_view body) {
  Request req;
  req.method = "PUT";
  req.key = key;
  req.body = body;
  return Perform(req).error();
}

Result<std::string> Client::GetObject(const std::string& key, std::optional<size_t> max_bytes) {
  Request req;
  req.key = key;
  if (max_bytes) req.headers.push_back(fmt::format("Range: bytes=0-{}", *max_bytes));
  CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
  if (max_bytes && resp.body.size() > *max_bytes)
    return InvalidArgumentError(
        fmt::format("S3 object {} in {} is larger than {} bytes", key, Describe(), *max_bytes));
  return std::move(resp.body);
}

Result<ObjectInfo> Client::HeadObject(const std::string& key) {
  Request req;
  req.method = "HEAD";
  req.key = key;
  CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
  if (resp.content_length < 0)
    return FailedPreconditionError(
        fmt::format("S3 HEAD {} in {}: no Content-Length", key, Describe()));
  return ObjectInfo{static_cast<uint64_t>(resp.content_length), resp.etag};
}

Status Client::GetRange(const std::string& key, const std::string& etag, uint64_t offset,
                        size_t length, std::string* out) {
  out->clear();  // keeps its capacity: callers reuse one buffer for every range
  if (length == 0) return OkStatus();
  Request req;
  req.key = key;
  req.headers.push_back(fmt::format("Range: bytes={}-{}", offset, offset + length - 1));
  if (!etag.empty()) req.headers.push_back("If-Match: " + etag);
  out->reserve(length);
  req.out = out;
  CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
  if (out->size() != length) {
    return Status(Code::kUnavailable,
                  fmt::format("S3 GET {} in {} bytes {}-{}: got {} bytes", key, Describe(), offset,
                              offset + length - 1, out->size()));
  }
  return OkStatus();
}

Status Client::DeleteObject(const std::string& key) {
  Request req;
  req.method = "DELETE";
  req.key = key;
  Result<Response> resp = Perform(req);
  if (!resp.has_value() && resp.error().code() == Code::kNotFound) return OkStatus();  // gone
  return std::move(resp).error();
}

Result<std::vector<std::string>> Client::ListKeys(const std::string& prefix) {
  std::vector<std::string> keys;
  std::string token;
  do {
    Request req;
    req.query = {{"list-type", "2"}, {"prefix", prefix}};
    if (!token.empty()) req.query["continuation-token"] = token;
    CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
    ListPage page = ParseListPage(resp.body);
    keys.insert(keys.end(), page.keys.begin(), page.keys.end());
    token = page.next_token;
  } while (!token.empty());
  return keys;
}

Result<std::string> Client::CreateMultipartUpload(const std::string& key) {
  Request req;
  req.method = "POST";
  req.key = key;
  req.query = {{"uploads", ""}};
  CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
  std::string id = XmlValue(resp.body, "UploadId");
  if (id.empty())
    return FailedPreconditionError(
        fmt::format("S3 gave no UploadId for {} in {}", key, Describe()));
  return id;
}

Result<std::string> Client::UploadPart(const std::string& key, const std::string& upload_id,
                                       int part_number, std::string_view body) {
  Request req;
  req.method = "PUT";
  req.key = key;
  req.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}};
  req.body = body;
  CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
  if (resp.etag.empty())
    return FailedPreconditionError(
        fmt::format("S3 gave no ETag for part {} of {} in {}", part_number, key, Describe()));
  return std::move(resp.etag);
}

Status Client::CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                       const std::vector<std::string>& etags) {
  Request req;
  req.method = "POST";
  req.key = key;
  req.query = {{"uploadId", upload_id}};
  std::string xml = CompleteMultipartXml(etags);
  req.body = xml;
  req.headers.push_back("Content-Type: application/xml");
  CEDANA_ASSIGN_OR_RETURN(Response resp, Perform(req));
  // S3 may answer 200 and still report an error in the body.
  if (!XmlValue(resp.body, "Code").empty() && XmlValue(resp.body, "ETag").empty()) {
    return FailedPreconditionError(
        fmt::format("S3 could not complete the upload of {} in {}: {} {}", key, Describe(),
                    XmlValue(resp.body, "Code"), XmlValue(resp.body, "Message")));
  }
  return OkStatus();
}

Status Client::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  Request req;
  req.method = "DELETE";
  req.key = key;
  req.query = {{"uploadId", upload_id}};
  return Perform(req).error();
}

}  // namespace cedana::storage::s3
