// ImageCapture: the streamer side of CRIU's image-streamer protocol for a dump (criu --stream;
// CRIU's criu/img-streamer.c). CRIU connects to <images_dir>/streamer-capture.sock and, for each
// image file it writes, sends the file's name (a u32 little-endian size, then the protobuf
// img_streamer_request_entry{filename}) and one byte carrying a pipe's write end (SCM_RIGHTS);
// it writes the file's bytes into that pipe and closes it. Several files may be open at once,
// so ImageCapture reads every open pipe (one thread, poll) and hands the bytes to an
// ImageReceiver in order per file. A receiver that blocks holds CRIU back (backpressure); one
// that fails makes ImageCapture close every pipe and the connection, so CRIU's next write fails
// (EPIPE) and the dump fails instead of completing.
//
// Owned by CriuClient::DumpDirect; one ImageCapture per dump. Thread-safe: the serving
// thread is internal; Wait/Stop/status may be called from any one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/result.h"
#include "common/unique_fd.h"

namespace cedana::engine {

// Where the captured image files go. Called from ImageCapture's thread only, in order: Open,
// then Write zero or more times, then Close, per file (files interleave).
class ImageReceiver {
 public:
  virtual ~ImageReceiver() = default;
  // Returns a handle for the file's later calls.
  virtual Result<int> Open(const std::string& name) = 0;
  virtual Status Write(int file, const void* data, size_t size) = 0;
  virtual Status Close(int file) = 0;
};

inline constexpr const char* kStreamerCaptureSocket = "streamer-capture.sock";

class ImageCapture {
 public:
  // Listens on <images_dir>/streamer-capture.sock and serves in a thread. With `owner` the
  // socket is given to that user, so that a CRIU running as them (unprivileged mode) can
  // connect. `receiver` is borrowed and must outlive the ImageCapture.
  static Result<std::unique_ptr<ImageCapture>> Listen(const std::string& images_dir,
                                                      std::optional<std::pair<uid_t, gid_t>> owner,
                                                      ImageReceiver* receiver);
  ~ImageCapture();  // Stop()
  ImageCapture(const ImageCapture&) = delete;
  ImageCapture& operator=(const ImageCapture&) = delete;

  // After CRIU exited: waits until every file CRIU opened reached its end and the connection
  // closed. kDeadlineExceeded past `deadline` (then Stop()s), or the receiver's error.
  Status Wait(std::chrono::steady_clock::time_point deadline);
  // Closes the connection and every pipe (CRIU's writes fail) and joins the thread.
  void Stop();
  // Set once the receiver or the protocol failed (then everything is closed already).
  bool failed() const;
  // The first error, or OK.
  Status status() const;
  // CRIU connected, so the failure (if any) came from the streamer side.
  bool connected() const;

 private:
  ImageCapture(std::string socket_path, UniqueFd listen_fd, UniqueFd wake_read, UniqueFd wake_write,
               ImageReceiver* receiver);
  void Serve();
  Status ServeLoop();

  const std::string socket_path_;
  UniqueFd listen_fd_;
  UniqueFd wake_read_, wake_write_;  // Stop() writes a byte to end the poll
  ImageReceiver* receiver_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;       // guarded by mu_
  bool connected_ = false;  // guarded by mu_
  Status status_;           // guarded by mu_
};

}  // namespace cedana::engine
