// ControllerClient: JSON over HTTP(S) to the controller's REST API (docs/api.md), for the node
// daemon's agent and `cedana version --init-config`. base_url is CEDANA_URL, which ends in /v1
// ("http://ctl:8080/v1"); paths are relative to it ("/agent/tasks"). Bearer token auth.
// Each call is one blocking request with a 10 s timeout. Thread-compatible (one per thread).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cedana::protocol {

class ControllerClient {
 public:
  ControllerClient(std::string base_url, std::string token);

  // kUnavailable when the controller cannot be reached, kPermissionDenied for a refused token,
  // otherwise the code of the controller's JSON error, with its message.
  Result<nlohmann::json> Get(const std::string& path);
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body);

 private:
  Result<nlohmann::json> Request(const char* method, const std::string& path,
                                 const std::string* body);

  const std::string base_url_;
  const std::string token_;
};

}  // namespace cedana::protocol
