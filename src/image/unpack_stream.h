// UnpackStream: one stored stream -> files in CRIU's images dir, verifying its checksum. Shared
// by UnpackToImagesDir (all streams, then CRIU) and DirectUnpack (CRIU while they arrive).
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"
#include "image/manifest.h"
#include "image/stream_group.h"
#include "image/stream_taps.h"
#include "image/tar.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

// What a direct restore follows of one stream. Both unset for a plain unpack.
struct StreamFollower {
  ExtractObserver* observer = nullptr;
  // Set: the stream's head is checked (manifest head) and this runs once it matched.
  std::function<void()> head_verified;
  // Set: when the stream is stored uncompressed in a file (a local store), this gets that file,
  // open for reading, before its first byte is read: its offsets are then the archive's
  // positions, and the observer may leave entries in it (ExtractObserver::LeavesInArchive).
  std::function<void(UniqueFd)> stored_file;
};

// kAborted "checksum mismatch ..." when the stored bytes differ from the manifest's.
Status UnpackStream(int index, storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                    const Manifest& manifest, const std::string& images_dir,
                    ProgressReporter* progress, const StreamGroup& group,
                    const StreamFollower& follower);

}  // namespace cedana::image
