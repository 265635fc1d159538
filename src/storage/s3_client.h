// S3Client: the S3 REST calls the checkpoint store needs, over libcurl with its built-in SigV4
// signing (CURLOPT_AWS_SIGV4). Every request carries x-amz-content-sha256 with the hex SHA-256
// of its body, so servers that verify payload hashes (radosgw, AWS) accept it. Requests are
// retried with exponential backoff on network errors, 5xx, 429 and RequestTimeout; other
// answers become a Status naming the bucket or key and S3's error code: kNotFound is a missing
// key, a missing bucket is kFailedPrecondition, refused credentials kPermissionDenied.
// Thread-safe: curl handles (and so their connections) are pooled and reused across threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "storage/s3_protocol.h"

namespace cedana::storage::s3 {

struct ObjectInfo {
  uint64_t size = 0;
  std::string etag;
};

class Client {
 public:
  // kInvalidArgument for settings that cannot work (no credentials, bad endpoint URL).
  static Result<std::shared_ptr<Client>> Create(S3Config settings, std::string bucket);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const S3Config& settings() const { return settings_; }
  // s3.part_size_mib in bytes: multipart upload parts and download ranges.
  size_t part_size() const { return static_cast<size_t>(settings_.part_size_mib) << 20; }
  // "bucket b at http://127.0.0.1:7480", for messages.
  std::string Describe() const;

  Status PutObject(const std::string& key, std::string_view body);
  // With max_bytes, asks for no more than max_bytes + 1 bytes: kInvalidArgument when the object
  // is larger than max_bytes.
  Result<std::string> GetObject(const std::string& key, std::optional<size_t> max_bytes = {});
  Result<ObjectInfo> HeadObject(const std::string& key);
  // Replaces *out with [offset, offset+length) of `key`, in its capacity when that suffices; if
  // etag is not empty the object must still have it (kAborted when it was replaced meanwhile).
  Status GetRange(const std::string& key, const std::string& etag, uint64_t offset, size_t length,
                  std::string* out);
  // Missing keys are fine.
  Status DeleteObject(const std::string& key);
  // Every key that starts with prefix.
  Result<std::vector<std::string>> ListKeys(const std::string& prefix);

  Result<std::string> CreateMultipartUpload(const std::string& key);  // the upload id
  // Returns the part's ETag. part_number counts from 1.
  Result<std::string> UploadPart(const std::string& key, const std::string& upload_id,
                                 int part_number, std::string_view body);
  Status CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                 const std::vector<std::string>& etags);
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id);

 private:
  struct Request;
  struct Response;
  class HandlePool;

  Client(S3Config settings, std::string bucket, Endpoint endpoint);
  // One attempt.
  Result<Response> Send(const Request& request);
  // Attempts until success, a final answer, or settings_.max_attempts.
  Result<Response> Perform(const Request& request);
  Status ErrorOf(const Request& request, const Response& response) const;

  const S3Config settings_;
  const std::string bucket_;
  const Endpoint endpoint_;
  std::unique_ptr<HandlePool> handles_;
};

// Whether an answer with this HTTP status and S3 error code is worth another attempt.
bool IsRetryableHttp(long status, std::string_view s3_code);

}  // namespace cedana::storage::s3
