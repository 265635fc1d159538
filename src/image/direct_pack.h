// DirectPack: packs image files into N compressed tar streams of a checkpoint store *as they
// arrive* (a direct dump: CRIU's image streamer hands over each file as it writes it), so
// that no images dir is written to disk and read back. The streams have the format
// PackImagesDir writes, so UnpackToImagesDir and `zstd -d | tar -x` read them unchanged.
//
// A tar entry needs its size up front, so each incoming file is buffered until it is complete
// (a small file: one whole entry `<name>`) or until part_bytes have arrived (a large file: one
// part `<name>@<offset>` per part_bytes, TarPartName). Finished entries wait in one queue that
// every stream's thread takes from (tar -> codec -> SHA-256 -> store), so the parts of one large
// pages image spread over the streams. Everything buffered (incoming files, queued entries and
// the entries the threads are writing) stays within memory_limit: when it is reached the
// caller of Append waits (backpressure), which for a direct dump means CRIU waits.
//
// Threads: the stream threads are created by Start and inherit the caller's file-system
// identity (AsFileUser). OpenFile/Append/CloseFile/Finish/Abort are called from one producer
// thread; stats() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "image/codec.h"
#include "image/manifest.h"
#include "image/stream_group.h"
#include "image/stream_taps.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

struct DirectPackOptions {
  int streams = 1;  // 1..64
  Codec codec = Codec::kNone;
  int level = 1;
  uint64_t part_bytes = 32ull << 20;     // largest entry; larger files become parts
  uint64_t memory_limit = 256ull << 20;  // bytes buffered at most (see above)
  ProgressFn progress;                   // optional; total is 0 (unknown during the dump)
};

struct DirectPackStats {
  uint64_t file_bytes = 0;  // bytes of all files received (the images' size)
  int files = 0;
  uint64_t peak_buffered = 0;           // most bytes held at once
  std::chrono::milliseconds waited{0};  // time Append spent waiting for memory
};

class DirectPack {
 public:
  // Starts options.streams threads, each creating its stream in `store`. kInvalidArgument for
  // streams out of range or a memory limit below one part.
  static Result<std::unique_ptr<DirectPack>> Start(storage::CheckpointStore& store,
                                                   const storage::CheckpointRef& ref,
                                                   DirectPackOptions options);
  // Aborts (and joins) when neither Finish nor Abort was called.
  ~DirectPack();
  DirectPack(const DirectPack&) = delete;
  DirectPack& operator=(const DirectPack&) = delete;

  // A new file; returns its handle. kInvalidArgument for an unsafe name (tar's rules), a name
  // too long for its part names, or one already received.
  Result<int> OpenFile(const std::string& name);
  // Appends to an open file; blocks while memory_limit is reached. kAborted once a stream
  // failed (Finish/Abort return the cause).
  Status Append(int file, const void* data, size_t size);
  // The file is complete: its last entry is queued.
  Status CloseFile(int file);
  // Every file must be closed. Writes the end of every stream and waits for the threads;
  // returns one StreamInfo per stream, or the first stream's error (the caller deletes ref).
  Result<std::vector<StreamInfo>> Finish();
  // Stops the threads without finishing the streams; returns the first stream error, if any.
  Status Abort();

  DirectPackStats stats() const;

 private:
  struct Entry {
    std::string name;  // whole-file or part name
    std::vector<char> data;
  };
  struct IncomingFile {
    std::string name;
    uint64_t offset = 0;  // of buf's first byte in the file
    bool parted = false;  // some part already queued: the rest travels as parts too
    bool open = true;
    std::vector<char> buf;
  };

  DirectPack(storage::CheckpointStore& store, storage::CheckpointRef ref,
             DirectPackOptions options);
  // The threads' work: take entries until the queue is closed and empty.
  Result<StreamInfo> RunStream(int index);
  // Waits until `size` more bytes fit, queueing partly filled files when nothing else could
  // free memory. Called with mu_ held.
  Status ReserveLocked(std::unique_lock<std::mutex>& lock, size_t size);
  // Queues buf of `f` as a part. Called with mu_ held.
  void QueuePartLocked(IncomingFile& f);
  Status Stop(bool finish);

  storage::CheckpointStore& store_;
  const storage::CheckpointRef ref_;
  const DirectPackOptions options_;
  ProgressReporter progress_;
  StreamGroup group_;
  std::vector<StreamInfo> infos_;
  Status group_status_;
  std::jthread runner_;  // runs group_ (and so the stream threads)

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // an entry was queued, or the queue closed
  std::condition_variable space_cv_;  // memory was freed, or a stream failed
  std::deque<Entry> queue_;           // guarded by mu_
  bool closed_ = false;               // guarded by mu_: no more entries
  bool abort_ = false;                // guarded by mu_: threads stop without finishing
  bool stream_failed_ = false;        // guarded by mu_
  int writing_ = 0;                   // guarded by mu_: entries the threads are writing
  uint64_t buffered_ = 0;             // guarded by mu_
  DirectPackStats stats_;             // guarded by mu_
  // Part buffers whose entries were written, kept for the next parts: fresh memory costs a
  // page fault per page on first touch, which made a GiB's worth of new buffers the slowest
  // step of a direct dump.
  std::vector<std::vector<char>> pool_;  // guarded by mu_
  std::vector<IncomingFile> files_;      // producer thread only
  bool stopped_ = false;                 // producer thread only
};

}  // namespace cedana::image
