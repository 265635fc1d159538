// DirectChunkPack: the memory pages of a deduplicated direct dump into the label's chunks *as
// CRIU hands them over* (docs/architecture.md, *Deduplicated checkpoints*). PackChunks
// (image/chunk_pack.h) cuts pages images that CRIU wrote to disk; this cuts them in arrival
// order, so that a dump whose memory mostly did not change since the label's last checkpoint
// costs a pipe copy and a digest per byte instead of a write of the whole memory into the
// images dir.
//
// Each pages image is received in regions of kChunkRegionBytes, as PackChunks reads them, so the
// chunks (and their digests) are the same either way and checkpoints of one label share chunks
// whichever way they were taken. A full region goes to one of the worker threads, which cuts it
// (image/chunking.h), hashes each chunk and stores the chunks the label's store does not hold.
// Every region held (being received, queued or being cut) counts against memory_limit: when it
// is reached the caller of Append waits, which for a direct dump means CRIU waits.
//
// A chunk the store held when the pack began is not stored again. If a sweep removes one
// before this checkpoint's index is written (another checkpoint of the label deleted during the
// dump), its bytes are gone with the region: Finish then fails with kAborted naming the chunks,
// and the dump is rolled back; the next one stores them.
//
// Threads: the workers are created by Start and inherit the caller's file-system identity
// (AsFileUser). OpenFile/Append/CloseFile/Finish/Abort are called from one producer thread;
// stats() from any thread.
#pragma once

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
#include "image/chunk_index.h"
#include "image/chunk_set.h"
#include "image/codec.h"
#include "image/stream_group.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

struct DirectChunkPackOptions {
  int threads = 1;             // workers cutting, hashing and storing regions
  Codec codec = Codec::kNone;  // a pages image whose first region does not compress: stored raw
  int level = 1;
  uint64_t memory_limit = 256ull << 20;  // region buffers held at most; at least one region
};

struct DirectChunkPackStats {
  uint64_t file_bytes = 0;  // bytes of the pages images received
  int files = 0;
  uint64_t peak_buffered = 0;           // most region bytes held at once
  std::chrono::milliseconds waited{0};  // time Append spent waiting for memory
};

class DirectChunkPack {
 public:
  // Lists the label's chunks and starts the workers. kInvalidArgument for a memory limit below
  // one region.
  static Result<std::unique_ptr<DirectChunkPack>> Start(storage::CheckpointStore& store,
                                                        const storage::CheckpointRef& ref,
                                                        DirectChunkPackOptions options);
  // Aborts (and joins) when neither Finish nor Abort was called.
  ~DirectChunkPack();
  DirectChunkPack(const DirectChunkPack&) = delete;
  DirectChunkPack& operator=(const DirectChunkPack&) = delete;

  // A new pages image; returns its handle. kInvalidArgument for a name that is not a pages
  // image's, or one already received.
  Result<int> OpenFile(const std::string& name);
  // Appends to an open file; blocks while memory_limit is reached. kAborted once a worker
  // failed (Finish/Abort return the cause).
  Status Append(int file, const void* data, size_t size);
  // The file is complete: its last region is queued.
  Status CloseFile(int file);
  // Every file must be closed. Waits for the workers, makes the chunks durable, writes the
  // chunk index beside ref's streams and checks that the store holds every chunk it names.
  // Returns what the manifest records of the index. On failure the caller deletes ref.
  Result<ChunkIndexInfo> Finish();
  // Stops the workers; returns the first worker error, if any.
  Status Abort();

  DirectChunkPackStats stats() const;

 private:
  struct Region {
    int file = 0;
    size_t number = 0;  // of the region in its file
    std::string name;   // of the file, for errors
    Codec codec = Codec::kNone;
    std::vector<char> data;
  };
  struct IncomingFile {
    std::string name;
    uint64_t size = 0;   // received so far
    size_t regions = 0;  // queued so far
    bool open = true;
    bool judged = false;  // its codec was chosen, from its first region
    Codec codec = Codec::kNone;
    std::vector<char> buf;  // the region being received
  };

  DirectChunkPack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                  DirectChunkPackOptions options, std::vector<std::string> stored,
                  std::unique_ptr<storage::ChunkWriter> writer);
  // A worker: cut, hash and store regions until the queue is closed and empty.
  Status RunWorker();
  Status CutRegion(Region& region);
  // Waits until one more region buffer fits, queueing the fullest partly received region when
  // nothing else could free memory. Called with mu_ held.
  Status ReserveRegionLocked(std::unique_lock<std::mutex>& lock);
  // Queues the region `f` is receiving. Called with mu_ held.
  void QueueRegionLocked(int file);
  Status Stop(bool finish);

  storage::CheckpointStore& store_;
  const storage::CheckpointRef ref_;
  const DirectChunkPackOptions options_;
  const std::unique_ptr<storage::ChunkWriter> writer_;
  ChunkSet chunks_;
  StreamGroup group_;
  Status group_status_;
  std::jthread runner_;  // runs group_ (and so the workers)

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // a region was queued, or the queue closed
  std::condition_variable space_cv_;  // a region buffer was freed, or a worker failed
  std::deque<Region> queue_;          // guarded by mu_
  bool closed_ = false;               // guarded by mu_: no more regions
  bool abort_ = false;                // guarded by mu_: workers stop at once
  bool worker_failed_ = false;        // guarded by mu_
  int held_ = 0;                      // guarded by mu_: region buffers in use
  DirectChunkPackStats stats_;        // guarded by mu_
  // Region buffers whose regions were cut, kept for the next regions: fresh memory costs a page
  // fault per page on first touch.
  std::vector<std::vector<char>> pool_;                    // guarded by mu_
  std::vector<std::vector<std::vector<ChunkEntry>>> cut_;  // guarded by mu_: [file][region]
  std::vector<IncomingFile> files_;                        // producer thread only
  bool stopped_ = false;                                   // producer thread only
};

}  // namespace cedana::image
