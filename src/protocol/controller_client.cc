#include "protocol/controller_client.h"

#include <curl/curl.h>

#include <mutex>

#include <fmt/format.h>

namespace cedana::protocol {
namespace {

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

Code CodeOfHttp(long status) {
  if (status == 401 || status == 403) return Code::kPermissionDenied;
  if (status == 404) return Code::kNotFound;
  if (status == 409) return Code::kFailedPrecondition;
  if (status == 400) return Code::kInvalidArgument;
  if (status == 422) return Code::kUnsupported;
  if (status >= 500) return Code::kUnavailable;
  return Code::kInternal;
}

std::string WithoutTrailingSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

ControllerClient::ControllerClient(std::string base_url, std::string token)
    : base_url_(WithoutTrailingSlash(std::move(base_url))), token_(std::move(token)) {}

Result<nlohmann::json> ControllerClient::Get(const std::string& path) {
  return Request("GET", path, nullptr);
}

Result<nlohmann::json> ControllerClient::Post(const std::string& path, const nlohmann::json& body) {
  std::string text = body.dump();
  return Request("POST", path, &text);
}

Result<nlohmann::json> ControllerClient::Request(const char* method, const std::string& path,
                                                 const std::string* body) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* h = curl_easy_init();
  if (h == nullptr) return InternalError("curl_easy_init failed");
  std::string url = base_url_ + path, response;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  headers = curl_slist_append(headers, "Content-Type: application/json");
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);
  if (body != nullptr) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK)
    return UnavailableError(fmt::format("controller {} unreachable: {}", base_url_,
                                        error[0] ? error : curl_easy_strerror(rc)));
  nlohmann::json j = nlohmann::json::parse(response.empty() ? "null" : response, nullptr, false);
  if (status >= 300) {
    std::string message =
        j.is_object() && j.contains("error") ? j["error"].value("message", "") : response;
    return Status(CodeOfHttp(status),
                  fmt::format("controller: {} {}: HTTP {}: {}", method, path, status, message));
  }
  if (j.is_discarded())
    return UnavailableError(fmt::format("controller: {} {}: the answer is not JSON", method, path));
  return j;
}

}  // namespace cedana::protocol
