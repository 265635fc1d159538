// DumpImages: where a dump's CRIU images go and how they reach the checkpoint store, chosen
// once by the dump's plan (checkpoint.direct):
//   packed after the dump   CRIU writes an images dir in the work dir; once CRIU is done it is
//                           packed into the store's streams (image/pack.h).
//   direct, during it       CRIU hands each image to a DirectPack as it writes it
//                           (image/direct_pack.h), so the memory never touches the local disk;
//                           the small images are written to the images dir as well.
// Either way the images dir holds every core-*.img for the credentials check before the commit,
// and CRIU's log. One producer thread calls Capture, then Store or Abort.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/checkpoint_engine.h"
#include "image/codec.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::daemon {

struct StoredImages {
  std::vector<image::StreamInfo> streams;
  std::optional<image::ChunkIndexInfo> chunk_index;  // deduplicated
  uint64_t images_bytes = 0;                         // the images' size before compression
  std::string note;  // for the dump's log line ("" or ", direct, ...")
};

class DumpImages {
 public:
  virtual ~DumpImages() = default;
  // Runs CRIU's dump of `request.pid` into it. When storing failed too, the error is the store's
  // (CRIU's failure is then its consequence); a full file system is named with its free space.
  virtual Status Capture(const engine::CheckpointEngine& engine,
                         const engine::DumpRequest& request) = 0;
  // Everything into the store, its streams ready for the commit.
  virtual Result<StoredImages> Store() = 0;
  // Stops storing: its threads may be writing what the rollback deletes next.
  virtual void Abort() = 0;
};

struct DumpImagesSetup {
  storage::CheckpointStore* store = nullptr;
  storage::CheckpointRef ref;
  std::string images_dir;  // made by the caller
  std::string work_dir;    // for the message when it is full
  int streams = 1;
  Codec codec = Codec::kNone;
  int level = 1;              // the codec's (image::CodecLevel)
  bool dedup = false;         // checkpoint.dedup: packed after the dump only (image/chunk_pack.h)
  uint64_t memory_limit = 0;  // the direct pack's buffers
  // The store's file-system identity (AsFileUser): storing threads are created with it.
  uid_t store_uid = 0;
  gid_t store_gid = 0;
  std::function<uint64_t()> expected_bytes;  // about what the dump writes, for messages
  std::function<void(const std::string& phase, uint64_t done, uint64_t total)> progress;
};

std::unique_ptr<DumpImages> PackedAfterDump(DumpImagesSetup setup);
std::unique_ptr<DumpImages> DirectDuringDump(DumpImagesSetup setup);

}  // namespace cedana::daemon
