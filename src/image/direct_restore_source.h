// DirectRestoreSource: what a direct restore serves CRIU its images from while they are still
// arriving (criu restore --stream; daemon/restore_images.h). Two kinds: DirectUnpack (streams
// whose pages follow a verified head, image/direct_unpack.h) and DirectChunkUnpack (a
// deduplicated checkpoint's pages straight from its chunks, image/direct_chunk_unpack.h).
// Thread-safe: Has/Send run on the image server's threads, the rest on the caller's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace cedana::image {

// The most files our CRIU takes for one image read in place (its patch 0008).
inline constexpr size_t kCriuInPlaceMaxFiles = 1 << 16;

// `length` bytes of an image lying at `offset` of a stored file (InPlaceImage::files[file]).
struct StoredRun {
  size_t file = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// An image lying in stored files, run after run in the image's order (one run when it lies
// whole in one file): CRIU may read it there in place.
struct InPlaceImage {
  std::vector<UniqueFd> files;  // each its own open file description, read-only
  std::vector<StoredRun> runs;
};

class DirectRestoreSource {
 public:
  virtual ~DirectRestoreSource() = default;

  // Every image that decides what CRIU recreates (credentials, mappings, files) is written and
  // verified, or the first error. Nothing is served before.
  virtual Status WaitForHeads() = 0;
  // Every byte served was verified, or the first error (a checksum mismatch says so): only
  // then may the restored tree, which CRIU leaves stopped, run.
  virtual Status Finish() = 0;
  // Stops every Send().
  virtual void Cancel() = 0;
  // The error that ended the source by itself (not Cancel()), else OK. CRIU fails when the
  // source stops under it; this says why.
  virtual Status Failure() const = 0;

  // Whether CRIU's image `name` exists. Call after WaitForHeads().
  virtual Result<bool> Has(const std::string& name) = 0;
  // Writes the image `name` into `pipe_fd` up to its end; kAborted when CRIU closed the pipe
  // early or the source failed or was cancelled.
  virtual Status Send(const std::string& name, int pipe_fd) = 0;
  // Where CRIU can read the existing image `name` in place instead of through Send(), if it
  // can: the same answer for the same name every time (CRIU opens a pages image twice, and
  // reads it by offset the second time). Nothing is verified there yet: only Finish() says the
  // bytes were. Default: nowhere.
  virtual Result<std::optional<InPlaceImage>> InPlace(const std::string& name) {
    return std::optional<InPlaceImage>();
  }
};

}  // namespace cedana::image
