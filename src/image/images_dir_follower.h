// ImagesDirFollower: packs CRIU's pages images *while CRIU is still writing them* into a
// StreamingPack, so that compression and storage overlap the dump instead of following it.
//
// CRIU dumps into an images dir as usual (it never waits for us: the freeze stays CRIU's own).
// A thread polls the dir for pages-*.img, which CRIU only appends to, and feeds every byte
// below the file's current size to the pack; the pack's memory limit holds this thread back,
// never CRIU. When CRIU has succeeded, Complete() reads the pages images to their end and adds
// every other file of the dir whole. The streams are the ones PackImagesDir writes, so
// restores cannot tell the difference.
//
// Used by one caller thread: Start, then Complete (CRIU succeeded) or Stop (it failed).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "image/stream_pack.h"

namespace cedana::image {

class ImagesDirFollower {
 public:
  // Starts following `images_dir` into `pack` (borrowed; it must outlive the follower). The
  // follower's thread runs at the lowest CPU priority when `background`, and with the calling
  // thread's file-system identity (it opens what CRIU wrote as the caller would).
  static std::unique_ptr<ImagesDirFollower> Start(std::string images_dir, StreamingPack* pack,
                                                  bool background);
  ~ImagesDirFollower();  // Stop()
  ImagesDirFollower(const ImagesDirFollower&) = delete;
  ImagesDirFollower& operator=(const ImagesDirFollower&) = delete;

  // CRIU succeeded: packs the rest of the pages images, then every other file of the dir
  // (sorted by name), and closes them all; the caller then Finishes the pack. The first error
  // (of reading or of the pack; anything but a regular file in the dir) otherwise.
  Status Complete();
  // CRIU failed: stops and joins the thread (cancelling a wait for the pack's memory).
  void Stop();

  // Bytes packed before Complete was called, i.e. while CRIU was still dumping.
  uint64_t bytes_while_dumping() const { return bytes_while_dumping_; }

 private:
  struct Followed {
    std::string name;
    UniqueFd fd;
    int handle = -1;  // the pack's
  };

  ImagesDirFollower(std::string images_dir, StreamingPack* pack)
      : dir_(std::move(images_dir)), pack_(pack) {}
  void Run(bool background);
  // Opens pages images not seen yet, then feeds what was appended to every followed file.
  Status Pass();
  // Feeds f's bytes up to its current end; the thread's reads also end once stop_ is set.
  Status ReadToEnd(Followed& f, bool until_stopped);
  Status AddWhole(const std::string& name);

  const std::string dir_;
  StreamingPack* const pack_;
  std::thread thread_;
  std::vector<Followed> files_;     // the thread's until it is joined, then the caller's
  std::set<std::string> seen_;      // likewise
  std::vector<char> buf_;           // likewise
  uint64_t bytes_ = 0;              // likewise
  uint64_t bytes_while_dumping_ = 0;
  Status thread_status_;            // written by the thread, read after the join

  std::atomic<bool> stop_{false};   // stop following (Complete or Stop)
  std::mutex mu_;                   // for wake_ only
  std::condition_variable wake_;
};

}  // namespace cedana::image
