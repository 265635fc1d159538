// ImageServe: the streamer side of CRIU's image-streamer protocol for a restore (criu restore
// --stream; CRIU's criu/img-streamer.c). CRIU connects to <images_dir>/streamer-serve.sock and,
// for each image file it reads, sends its name; we answer whether it exists, and if so CRIU
// sends one byte carrying a pipe's write end (SCM_RIGHTS), into which the file's bytes go, then
// the pipe is closed. Requests come one at a time (CRIU serializes them), but CRIU reads the
// pipes at its own pace, so every file is sent on its own thread. A send that fails is logged
// only: whether CRIU restored is CRIU's answer. Our CRIU build (its patch 0008) says in each
// request that it can read a file in place: when the source has the image lying in regular
// files, CRIU gets those files and the image's runs in them instead of sending a pipe.
//
// One ImageServe per restore. Thread-safe: the serving threads are internal.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "engine/streamer_protocol.h"

namespace cedana::engine {

// An image lying in regular files, open for reading: `runs` in the image's order, each in one
// of `files`.
struct InPlaceImage {
  std::vector<UniqueFd> files;
  std::vector<ImageRun> runs;
};

// Where the served image files come from. Called from ImageServe's threads.
class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // Whether the image exists (may wait until that is known).
  virtual Result<bool> Has(const std::string& name) = 0;
  // Writes the whole image into `pipe_fd` (ImageServe closes it afterwards).
  virtual Status Send(const std::string& name, int pipe_fd) = 0;
  // Where CRIU can read the existing image in place; nullopt: send it through a pipe. Only for
  // pages images (CRIU reads them as far as their pagemap says, not to the file's end), and the
  // same answer for the same name. Default: always the pipe.
  virtual Result<std::optional<InPlaceImage>> InPlace(const std::string& name) {
    return std::optional<InPlaceImage>();
  }
};

inline constexpr const char* kStreamerServeSocket = "streamer-serve.sock";

class ImageServe {
 public:
  // Listens on <images_dir>/streamer-serve.sock and serves in a thread. With `owner` the socket
  // is given to that user (a CRIU running as them). `source` must outlive the ImageServe.
  static Result<std::unique_ptr<ImageServe>> Listen(const std::string& images_dir,
                                                    std::optional<std::pair<uid_t, gid_t>> owner,
                                                    ImageSource* source);
  ~ImageServe();  // Stop()
  ImageServe(const ImageServe&) = delete;
  ImageServe& operator=(const ImageServe&) = delete;

  // Ends the connection and waits for every send (each ends when its file is complete or CRIU
  // closed its pipe: call it once CRIU exited and the source will not stall).
  void Stop();
  // How many images (by name) CRIU was given to read in place.
  size_t ImagesInPlace();

 private:
  ImageServe(std::string socket_path, UniqueFd listen_fd, UniqueFd wake_read, UniqueFd wake_write,
             ImageSource* source);
  Status ServeLoop();

  const std::string socket_path_;
  UniqueFd listen_fd_;
  UniqueFd wake_read_, wake_write_;  // Stop() writes a byte to end the loop
  ImageSource* source_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::thread> senders_;  // guarded by mu_
  std::set<std::string> in_place_;    // guarded by mu_
};

}  // namespace cedana::engine
