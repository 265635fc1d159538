// DirectChunkUnpack: a deduplicated checkpoint served to CRIU's restore with its memory pages
// read from the label's chunks as CRIU asks for them, instead of first written into the images
// dir (docs/architecture.md, *Restore sequence*). The streams (every image but the pages) are
// unpacked and verified first; then each pages image goes to CRIU chunk by chunk, every chunk
// checked against its digest in the signed index before a byte of it is written to CRIU, with
// a few chunks read ahead. Since nothing unverified reaches CRIU, Finish only reports what a
// Send found. DirectRestoreSource says what each call guarantees.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "image/chunk_index.h"
#include "image/direct_restore_source.h"
#include "image/manifest.h"
#include "image/stream_taps.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

class DirectChunkUnpack : public DirectRestoreSource {
 public:
  // kFailedPrecondition when the checkpoint is not deduplicated. `images_dir` must exist and be
  // empty.
  static Result<std::unique_ptr<DirectChunkUnpack>> Start(storage::CheckpointStore& store,
                                                          const storage::CheckpointRef& ref,
                                                          const Manifest& manifest,
                                                          const std::string& images_dir,
                                                          ProgressFn progress = {});
  DirectChunkUnpack(const DirectChunkUnpack&) = delete;
  DirectChunkUnpack& operator=(const DirectChunkUnpack&) = delete;

  // Unpacks every stream (they hold no pages) and reads the chunk index, all verified.
  Status WaitForHeads() override;
  // Writes the pages from the chunks into the images dir too.
  Status CompleteImagesDir() override;
  Status Finish() override;
  void Cancel() override;
  Status Failure() const override;
  Result<bool> Has(const std::string& name) override;
  Status Send(const std::string& name, int pipe_fd) override;

 private:
  DirectChunkUnpack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                    const Manifest& manifest, std::string images_dir, ProgressFn progress);
  const ChunkedFile* PagesFile(const std::string& name) const;
  Status SendChunks(const ChunkedFile& file, int pipe_fd);
  // Records the first failure that was not a cancellation; returns `s`.
  Status Fail(Status s);
  bool Stopped() const;

  storage::CheckpointStore& store_;
  const storage::CheckpointRef ref_;
  const Manifest manifest_;
  const std::string images_dir_;
  const ProgressFn progress_fn_;
  std::unique_ptr<ProgressReporter> progress_;
  ChunkIndex index_;  // set by WaitForHeads, then read only

  mutable std::mutex mu_;
  bool cancelled_ = false;  // guarded by mu_
  Status failure_;          // guarded by mu_
};

}  // namespace cedana::image
