// RestoreImages: how a checkpoint's images reach CRIU in a restore, chosen per attempt:
//   UnpackedFirst       every stream is read, verified and unpacked into the images dir before
//                       CRIU starts.
//   DirectIfPossible  CRIU starts once every stream's head (all images but the pages) is
//                       unpacked and verified; the pages are served to it (engine/image_serve.h)
//                       while the streams are still read, and the tree, which CRIU leaves
//                       stopped, may run only once Verified(). A checkpoint without heads, or
//                       one whose processes outnumber the cores, is unpacked first instead.
// Either way CRIU sees no byte that was not verified. The store is read with the file-system
// identity given (AsFileUser); the unpack's threads inherit it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/result.h"
#include "image/manifest.h"
#include "image/stream_taps.h"
#include "storage/checkpoint_store.h"

namespace cedana::daemon {

class RestoreImages {
 public:
  virtual ~RestoreImages() = default;
  // Until CRIU may start; direct() then says which way it went.
  virtual Status Unpack() = 0;
  virtual bool direct() const = 0;
  // Direct: serves the pages to a CRIU running as `criu_user` (unset: root).
  virtual Status Serve(std::optional<std::pair<uid_t, gid_t>> criu_user) = 0;
  // Direct: the rest of every stream is read and verified; the server is stopped.
  virtual Status Verified() = 0;
  // Direct: how many images CRIU read in place from the stored streams (not through a pipe).
  virtual size_t ImagesInPlace() const = 0;
  // The error that stopped the unpack by itself, else OK: why CRIU found no more data.
  virtual Status Failure() const = 0;
  // Stops what is still being unpacked and served. Idempotent; the destructor calls it.
  virtual void Cancel() = 0;
};

struct RestoreImagesSetup {
  storage::CheckpointStore* store = nullptr;
  storage::CheckpointRef ref;
  const image::Manifest* manifest = nullptr;
  std::string images_dir;  // exists, empty
  uid_t store_uid = 0;
  gid_t store_gid = 0;
  image::ProgressFn progress;  // may be called from the unpack's threads
};

std::unique_ptr<RestoreImages> UnpackedFirst(RestoreImagesSetup setup);
std::unique_ptr<RestoreImages> DirectIfPossible(RestoreImagesSetup setup);

}  // namespace cedana::daemon
