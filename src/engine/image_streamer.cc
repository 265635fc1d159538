// ImageCapture: CRIU's image files, received through its image-streamer socket.
#include "engine/image_streamer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <vector>

#include <fmt/format.h>

#include "common/log.h"
#include "engine/streamer_protocol.h"

namespace cedana::engine {
namespace {

constexpr size_t kReadChunk = 1 << 20;  // bytes read from a pipe at once
constexpr int kPipeSize = 1 << 20;      // asked for CRIU's pipes (fewer wake-ups)

struct OpenImage {
  UniqueFd pipe;
  int handle = 0;
  std::string name;
};

}  // namespace

Result<std::unique_ptr<ImageCapture>> ImageCapture::Listen(
    const std::string& images_dir, std::optional<std::pair<uid_t, gid_t>> owner,
    ImageReceiver* receiver) {
  std::string path = images_dir + "/" + kStreamerCaptureSocket;
  CEDANA_ASSIGN_OR_RETURN(UniqueFd fd, ListenForCriu(path, owner));
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) return ErrnoStatus(errno, "pipe");
  std::unique_ptr<ImageCapture> capture(
      new ImageCapture(path, std::move(fd), UniqueFd(wake[0]), UniqueFd(wake[1]), receiver));
  ImageCapture* c = capture.get();
  c->thread_ = std::thread([c] { c->Serve(); });
  return capture;
}

ImageCapture::ImageCapture(std::string socket_path, UniqueFd listen_fd, UniqueFd wake_read,
                           UniqueFd wake_write, ImageReceiver* receiver)
    : socket_path_(std::move(socket_path)),
      listen_fd_(std::move(listen_fd)),
      wake_read_(std::move(wake_read)),
      wake_write_(std::move(wake_write)),
      receiver_(receiver) {}

ImageCapture::~ImageCapture() { Stop(); }

void ImageCapture::Serve() {
  Status s;
  try {
    s = ServeLoop();
  } catch (const std::exception& e) {
    log::Error("engine: image streamer threw: {}", e.what());
    s = InternalError(std::string("image streamer: unexpected exception: ") + e.what());
  }
  ::unlink(socket_path_.c_str());
  std::lock_guard lock(mu_);
  if (status_.ok()) status_ = std::move(s);
  done_ = true;
  done_cv_.notify_all();
}

// One connection (CRIU's), then until it and every pipe reached their end. Returning closes
// whatever is still open, which is what makes CRIU's writes fail after an error.
Status ImageCapture::ServeLoop() {
  UniqueFd conn;
  bool conn_open = false;
  std::deque<UniqueFd> fds;
  std::vector<OpenImage> images;
  std::vector<char> buf(kReadChunk);
  for (;;) {
    if (conn.valid() && !conn_open && images.empty()) return OkStatus();
    std::vector<pollfd> polled;
    polled.push_back({wake_read_.get(), POLLIN, 0});
    polled.push_back({conn.valid() ? (conn_open ? conn.get() : -1) : listen_fd_.get(), POLLIN, 0});
    for (const OpenImage& im : images) polled.push_back({im.pipe.get(), POLLIN, 0});
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "image streamer poll");
    }
    if (polled[0].revents != 0) return AbortedError("image streamer stopped");
    if (polled[1].revents != 0 && !conn.valid()) {
      conn.Reset(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.valid()) return ErrnoStatus(errno, "accepting criu's image streamer connection");
      conn_open = true;
      listen_fd_.Reset();  // one dump, one connection
      std::lock_guard lock(mu_);
      connected_ = true;
    } else if (polled[1].revents != 0) {
      // A request: size-prefixed protobuf with the name, then one byte carrying the pipe.
      uint32_t size = 0;
      Status s = RecvExact(conn.get(), &size, sizeof size, &fds);
      if (s.code() == Code::kUnavailable) {
        conn_open = false;  // CRIU opens no more files
        continue;
      }
      CEDANA_RETURN_IF_ERROR(s);
      if (size > kMaxRequest) return AbortedError("criu sent an oversized image streamer request");
      std::string request(size, '\0');
      CEDANA_RETURN_IF_ERROR(RecvExact(conn.get(), request.data(), size, &fds));
      char dummy;
      CEDANA_RETURN_IF_ERROR(RecvExact(conn.get(), &dummy, 1, &fds));
      if (fds.empty()) return AbortedError("criu sent an image file without its pipe");
      CEDANA_ASSIGN_OR_RETURN(FileRequest file, ParseFileRequest(request));
      std::string name = std::move(file.name);
      OpenImage im{std::move(fds.front()), 0, name};
      fds.pop_front();
      ::fcntl(im.pipe.get(), F_SETPIPE_SZ, kPipeSize);  // best effort
      ::fcntl(im.pipe.get(), F_SETFL, O_NONBLOCK);
      Result<int> handle = receiver_->Open(name);
      if (!handle.has_value()) return handle.error().WithContext("receiving " + name);
      im.handle = *handle;
      log::Debug("engine: criu streams {}", name);
      images.push_back(std::move(im));
    }
    // Every pipe that polled ready; closed ones leave the list.
    // polled[p] is images[i] as they were before this round; new ones wait for the next.
    for (size_t i = 0, p = 2; p < polled.size(); ++p) {
      if (polled[p].revents == 0) {
        ++i;
        continue;
      }
      ssize_t n = ::read(images[i].pipe.get(), buf.data(), buf.size());
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        ++i;
        continue;
      }
      if (n < 0) return ErrnoStatus(errno, "reading " + images[i].name + " from criu");
      if (n > 0) {
        CEDANA_RETURN_IF_ERROR(receiver_->Write(images[i].handle, buf.data(), n))
            << "receiving " << images[i].name;
        ++i;
        continue;
      }
      CEDANA_RETURN_IF_ERROR(receiver_->Close(images[i].handle)) << "receiving " << images[i].name;
      images.erase(images.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

Status ImageCapture::Wait(std::chrono::steady_clock::time_point deadline) {
  {
    std::unique_lock lock(mu_);
    if (!done_cv_.wait_until(lock, deadline, [&] { return done_; })) {
      lock.unlock();
      Stop();
      return DeadlineExceededError("criu's image files did not all arrive in time");
    }
  }
  Stop();
  return status();
}

void ImageCapture::Stop() {
  if (wake_write_.valid()) {
    char b = 1;
    (void)!::write(wake_write_.get(), &b, 1);
  }
  if (thread_.joinable()) thread_.join();
}

bool ImageCapture::failed() const {
  std::lock_guard lock(mu_);
  return done_ && !status_.ok();
}

Status ImageCapture::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

bool ImageCapture::connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}

}  // namespace cedana::engine
