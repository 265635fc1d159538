// DirectUnpack: a checkpoint's streams -> CRIU's images dir while CRIU already restores from
// it (criu restore --stream). Each stream holds every image but the memory pages first (its
// head, hashed on its own in the manifest), then the pages. The streams are unpacked in
// parallel as in UnpackToImagesDir; WaitForHeads() returns once every head is written and
// verified, so CRIU starts with all the images that decide what it recreates (credentials,
// mappings, files) checked. Send() then hands a file to CRIU through its pipe as its bytes land
// in the images dir, pages included, while later parts are still being read. Finish() returns
// once every stream was read to its end and its checksum compared: only then may the restored
// tree, which CRIU leaves stopped, run.
//
// The stream threads never wait for CRIU (the images dir takes whatever CRIU has not read yet),
// so no order in which CRIU asks for files can stall them. The pages of a stream stored
// uncompressed in a local file are not written into the images dir at all: the stream's thread
// reads (and hashes) them, and Send() hands CRIU the same bytes from the stored file through the
// same open file description, so a restore of memory that does not compress makes no second copy
// of it. When every stream is stored so, InPlace() hands CRIU a pages image's runs in the stored
// files (its parts, in several streams, or the whole file in one) to read there itself, as from
// an images dir.
// Thread-safe: Send/Has/InPlace run on the image server's threads, the rest on the caller's.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "image/direct_restore_source.h"
#include "image/manifest.h"
#include "image/pack.h"
#include "image/stream_group.h"
#include "image/stream_taps.h"
#include "image/tar.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

class DirectUnpack : public DirectRestoreSource {
 public:
  // kFailedPrecondition when the checkpoint's streams have no heads (made before them, or by a
  // direct dump): restore it with UnpackToImagesDir; and for a deduplicated checkpoint, which
  // DirectChunkUnpack serves. `images_dir` must exist and be empty.
  static Result<std::unique_ptr<DirectUnpack>> Start(storage::CheckpointStore& store,
                                                     const storage::CheckpointRef& ref,
                                                     const Manifest& manifest,
                                                     const std::string& images_dir,
                                                     ProgressFn progress = {});
  ~DirectUnpack() override;  // Cancel(), then joins
  DirectUnpack(const DirectUnpack&) = delete;
  DirectUnpack& operator=(const DirectUnpack&) = delete;

  // Every head written and verified, or the first error.
  Status WaitForHeads() override;
  // Every stream read and verified, or the first error (a checksum mismatch says so).
  Status Finish() override;
  // Stops the streams and every Send().
  void Cancel() override;
  // The error that ended the unpack by itself (a stream's, not Cancel()), else OK.
  Status Failure() const override;

  // Whether CRIU's image `name` exists (for pages, waits until a stream brings it or all have
  // gone past it). Call after WaitForHeads().
  Result<bool> Has(const std::string& name) override;
  // Writes the image `name` into `pipe_fd` (made non-blocking) as its bytes arrive, up to its
  // end; kAborted when CRIU closed the pipe early or the unpack failed or was cancelled. A pages
  // image is sent once: kFailedPrecondition the second time, since what CRIU read of it is
  // released from the images dir.
  Status Send(const std::string& name, int pipe_fd) override;
  // A pages image's runs in the stored files (AllPagesInPlace), each file opened again. The
  // files' tar headers are listed on the first call (parts are placed before the streams'
  // threads reach them); nothing there is verified until Finish(). Call after Has().
  Result<std::optional<InPlaceImage>> InPlace(const std::string& name) override;
  // Every stream is stored uncompressed in a local file: every pages image has a place to be
  // read in (InPlace gives one for each, unless the stored streams were altered). Call after
  // WaitForHeads().
  bool AllPagesInPlace() const;

 private:
  class Follower;
  DirectUnpack(const Manifest& manifest, std::string images_dir, ProgressFn progress);
  // How far `file` has arrived without a gap (under mu_).
  uint64_t ContiguousBytes(const std::string& file) const;
  // A pages file's copy in the images dir, as one Send() reads it.
  struct ImagesDirCopy {
    UniqueFd fd;              // opened on first use, read-write to release what CRIU read
    uint64_t released = 0;    // everything before this is punched out of the file
    bool can_release = true;  // false once the file system refused
  };
  // Sends the pages file `name` from *sent up to `end` (arrived) into the pipe, each part from
  // where it is, and releases from the images dir what CRIU has read.
  Status SendPages(const std::string& name, int pipe_fd, uint64_t* sent, uint64_t end,
                   ImagesDirCopy* copy);
  // Punches out of the images dir's copy of a pages file what CRIU has read of its first `sent`
  // bytes through `pipe_fd` (whole pages, in steps of kReleaseStepBytes at least). CRIU reads each
  // image once, so those bytes are not needed again, and keeping them made the restore of
  // compressed memory hold a second copy of it in the page cache, which the kernel then wrote
  // back to disk (2.1 GiB of 4 GiB) while CRIU and the streams' threads ran.
  static void ReleaseWhatCriuRead(int pipe_fd, uint64_t sent, ImagesDirCopy* copy);
  // Before stream `stream` reads the pages entry `entry` of its stored file: waits until no
  // other stream is in its head or at an earlier entry (pages file, offset). With every stream
  // stored uncompressed, CRIU reads the pages in place in that order: the streams' threads, which
  // only hash them, then read them one at a time, as one stream would, instead of four files at
  // once beside CRIU (which made CRIU 1.5 s slower for 4 GiB).
  Status TakeTurn(int stream, const TarEntryHeader& entry);
  bool Turn(int stream) const;  // under mu_
  // Every stream's pages are left in its stored file (under mu_).
  bool EveryStreamStored() const;
  // ListStoredPages() on the first call; its result every time.
  Status Listing();
  // Lists the pages entries of every stored file into stored_pages_.
  Status ListStoredPages();
  // The stored file of `stream`, opened again.
  Result<UniqueFd> OpenStoredFileAgain(int stream);
  // No stream will write more of the pages file `file` (under mu_).
  bool Complete(const std::string& file) const;
  bool Stopped() const;               // an error or Cancel() (under mu_)
  std::function<bool()> StopCheck();  // Stopped(), taking mu_: for the sends' waits

  const Manifest manifest_;
  const std::string images_dir_;
  const ProgressFn progress_fn_;
  std::unique_ptr<ProgressReporter> progress_;
  StreamGroup group_;
  std::vector<std::unique_ptr<Follower>> followers_;
  std::thread runner_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  int heads_left_;          // guarded by mu_
  bool done_ = false;       // the streams' threads returned (guarded by mu_)
  bool cancelled_ = false;  // guarded by mu_
  Status status_;           // guarded by mu_
  struct Position {
    bool in_pages = false;  // past its head
    bool finished = false;  // read to its end (or failed)
    std::string file;       // the pages file it is in ...
    uint64_t offset = 0;    // ... and where its entry starts in that file
  };
  std::vector<Position> positions_;  // per stream; guarded by mu_
  // A part of a pages file: in the images dir, or left in a stream's stored file.
  struct Part {
    uint64_t bytes = 0;      // arrived so far
    int stream = -1;         // >= 0: left in stored_files_[stream], ...
    uint64_t stored_at = 0;  // ... from this offset of it
  };
  // pages file -> (part offset -> part); guarded by mu_
  std::map<std::string, std::map<uint64_t, Part>> pages_;
  // Per stream: its stored file when its pages are left there (set by its thread before its
  // first byte, kept until destruction); guarded by mu_.
  std::vector<UniqueFd> stored_files_;
  // Where the pages entries lie in the stored files, as their headers say: pages file -> (part
  // offset -> part). Written once under listed_, read only after it.
  struct StoredPart {
    int stream = 0;
    uint64_t at = 0;     // where its bytes start in the stream's stored file
    uint64_t bytes = 0;  // how many
  };
  std::once_flag listed_;
  Status listing_;
  std::map<std::string, std::map<uint64_t, StoredPart>> stored_pages_;
  std::set<std::string> conflicting_;  // pages files with two entries at one offset
  // Pages files Send() was asked for: their copies in the images dir are released as CRIU reads
  // them, so each is sent once. Guarded by mu_.
  std::set<std::string> sent_pages_;
};

}  // namespace cedana::image
