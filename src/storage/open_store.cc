// OpenStore: picks the CheckpointStore implementation a checkpoint dir location names.
#include <memory>
#include <string>

#include "storage/checkpoint_store.h"
#include "storage/local_store.h"

namespace cedana::storage {

Result<std::unique_ptr<CheckpointStore>> OpenStore(const std::string& location) {
  if (location.empty()) return InvalidArgumentError("checkpoint dir is empty");
  if (location.rfind("s3://", 0) == 0) {
    // TODO(#3): S3 storage (DESIGN.md §4) lands with the libcurl client.
    return FailedPreconditionError("s3:// storage is not built yet; use a local or NFS path for " +
                                   location);
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
