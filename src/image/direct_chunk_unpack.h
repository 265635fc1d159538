// DirectChunkUnpack: a deduplicated checkpoint served to CRIU's restore with its memory pages
// read from the label's chunks as CRIU asks for them, instead of first written into the images
// dir (docs/architecture.md, *Restore sequence*). The streams (every image but the pages) are
// unpacked and verified first. A pages image whose chunks are all stored raw in a local dir is
// read by CRIU in place, a run per chunk file (InPlace), while threads of ours read the same
// open files and check every chunk against its digest; Finish waits for them. Any other pages
// image goes to CRIU through a pipe chunk by chunk, every chunk checked before a byte of it is
// written, with a few chunks read ahead. DirectRestoreSource says what each call guarantees.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
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
  ~DirectChunkUnpack() override;  // Cancel(), then waits for the checks of images read in place
  DirectChunkUnpack(const DirectChunkUnpack&) = delete;
  DirectChunkUnpack& operator=(const DirectChunkUnpack&) = delete;

  // Unpacks every stream (they hold no pages) and reads the chunk index, all verified.
  Status WaitForHeads() override;
  // Writes the pages from the chunks into the images dir too, every chunk verified, for a plain
  // restore instead of a direct one (CRIU then reads the images dir); nothing is served after it.
  Status CompleteImagesDir();
  Status Finish() override;
  void Cancel() override;
  Status Failure() const override;
  Result<bool> Has(const std::string& name) override;
  Status Send(const std::string& name, int pipe_fd) override;
  // A run per chunk, each in its own chunk file, when every chunk of the pages image `name` is
  // stored raw in a local file and their files fit our CRIU's bound and our descriptor limit.
  // The first answer starts the check of those chunks, read from the same open files.
  Result<std::optional<InPlaceImage>> InPlace(const std::string& name) override;

 private:
  DirectChunkUnpack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                    const Manifest& manifest, std::string images_dir, ProgressFn progress);
  const ChunkedFile* PagesFile(const std::string& name) const;
  Status SendChunks(const ChunkedFile& file, int pipe_fd);
  // The chunk files of `file`, open, if every one is stored raw at the size its entry says.
  std::optional<std::vector<UniqueFd>> OpenRawChunks(const ChunkedFile& file);
  // One chunk's file, open, if it is stored raw at the size `chunk` says.
  std::optional<UniqueFd> OpenRawChunk(const ChunkEntry& chunk);
  // Checks chunks first, first + kChecksPerImage, ... of `file`, read from `files` (its chunk
  // files), as ReadVerifiedChunk does.
  void VerifyInPlace(const ChunkedFile& file, const std::vector<UniqueFd>& files, size_t first);
  void WaitForChecks();
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
  bool cancelled_ = false;           // guarded by mu_
  Status failure_;                   // guarded by mu_
  std::vector<std::thread> checks_;  // guarded by mu_
  bool unchecked_ = false;  // a check of an image read in place stopped early; guarded by mu_

  // Each pages image CRIU asked to read in place: its chunk files, open until the end, or
  // nullopt when it goes through a pipe (the same answer every time).
  std::mutex in_place_mu_;
  std::map<std::string, std::optional<std::vector<UniqueFd>>> in_place_;  // by in_place_mu_
};

}  // namespace cedana::image
