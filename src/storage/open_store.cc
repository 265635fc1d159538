// OpenStore: picks the CheckpointStore implementation a checkpoint dir location names.
#include <memory>
#include <string>

#include "storage/checkpoint_store.h"
#include "storage/local_store.h"
#include "storage/s3_client.h"
#include "storage/s3_protocol.h"
#include "storage/s3_store.h"

namespace cedana::storage {

bool IsS3Location(std::string_view location) { return location.rfind("s3://", 0) == 0; }

Result<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& location,
                                                   const S3Config& s3_config,
                                                   uint64_t stream_memory) {
  if (location.empty()) return InvalidArgumentError("checkpoint dir is empty");
  if (IsS3Location(location)) {
    CEDANA_ASSIGN_OR_RETURN(s3::Location where, s3::ParseLocation(location));
    CEDANA_ASSIGN_OR_RETURN(auto client, s3::Client::Create(s3_config, where.bucket));
    return std::unique_ptr<CheckpointStore>(
        std::make_unique<S3Store>(where, std::move(client), stream_memory));
  }
  if (location.find("://") != std::string::npos) {
    return InvalidArgumentError("checkpoint dir " + location +
                                " has an unknown scheme (want an absolute path or s3://)");
  }
  if (location[0] != '/') {
    return InvalidArgumentError("checkpoint dir " + location + " must be an absolute path");
  }
  return std::unique_ptr<CheckpointStore>(std::make_unique<LocalStore>(location));
}

}  // namespace cedana::storage
