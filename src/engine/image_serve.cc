// ImageServe: CRIU's image files, served through its image-streamer socket for a restore.
#include "engine/image_serve.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>

#include "common/log.h"
#include "engine/streamer_protocol.h"

namespace cedana::engine {

Result<std::unique_ptr<ImageServe>> ImageServe::Listen(const std::string& images_dir,
                                                       std::optional<std::pair<uid_t, gid_t>> owner,
                                                       ImageSource* source) {
  std::string path = images_dir + "/" + kStreamerServeSocket;
  CEDANA_ASSIGN_OR_RETURN(UniqueFd fd, ListenForCriu(path, owner));
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) return ErrnoStatus(errno, "pipe");
  std::unique_ptr<ImageServe> serve(
      new ImageServe(path, std::move(fd), UniqueFd(wake[0]), UniqueFd(wake[1]), source));
  ImageServe* s = serve.get();
  s->thread_ = std::thread([s] {
    Status st = s->ServeLoop();
    if (!st.ok()) log::Warn("engine: image server: {}", st.ToString());
    ::unlink(s->socket_path_.c_str());
  });
  return serve;
}

ImageServe::ImageServe(std::string socket_path, UniqueFd listen_fd, UniqueFd wake_read,
                       UniqueFd wake_write, ImageSource* source)
    : socket_path_(std::move(socket_path)),
      listen_fd_(std::move(listen_fd)),
      wake_read_(std::move(wake_read)),
      wake_write_(std::move(wake_write)),
      source_(source) {}

ImageServe::~ImageServe() { Stop(); }

// Waits for the connection, then answers requests until CRIU hangs up or Stop().
Status ImageServe::ServeLoop() {
  UniqueFd conn;
  std::deque<UniqueFd> fds;
  for (;;) {
    pollfd polled[2] = {{wake_read_.get(), POLLIN, 0},
                        {conn.valid() ? conn.get() : listen_fd_.get(), POLLIN, 0}};
    if (::poll(polled, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "image server poll");
    }
    if (polled[0].revents != 0) return OkStatus();
    if (!conn.valid()) {
      conn.Reset(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.valid()) return ErrnoStatus(errno, "accepting criu's image server connection");
      listen_fd_.Reset();  // one restore, one connection
      continue;
    }
    uint32_t size = 0;
    Status s = RecvExact(conn.get(), &size, sizeof size, &fds);
    if (s.code() == Code::kUnavailable) return OkStatus();  // CRIU reads no more files
    CEDANA_RETURN_IF_ERROR(s);
    if (size > kMaxRequest) return AbortedError("criu sent an oversized image request");
    std::string request(size, '\0');
    CEDANA_RETURN_IF_ERROR(RecvExact(conn.get(), request.data(), size, &fds));
    CEDANA_ASSIGN_OR_RETURN(FileRequest file, ParseFileRequest(request));
    const std::string& name = file.name;
    Result<bool> exists = source_->Has(name);
    // An error (the unpack failed) answers "no such file": CRIU fails on its own then.
    if (!exists.has_value()) log::Warn("engine: image {}: {}", name, exists.error().ToString());
    bool found = exists.has_value() && *exists;
    if (found && file.reads_in_place) {
      auto in_place = source_->InPlace(name);
      // An error leaves the pipe: slower, as correct.
      if (!in_place.has_value())
        log::Warn("engine: image {} in place: {}", name, in_place.error().ToString());
      if (in_place.has_value() && in_place->has_value()) {
        const InPlaceImage& image = **in_place;
        log::Debug("engine: criu reads {} in place: {} runs in {} files", name, image.runs.size(),
                   image.files.size());
        CEDANA_RETURN_IF_ERROR(
            SendInPlaceReply(conn.get(), image.runs, static_cast<uint32_t>(image.files.size())));
        for (const UniqueFd& f : image.files)
          CEDANA_RETURN_IF_ERROR(SendFileToRead(conn.get(), f.get()));
        std::lock_guard lock(mu_);
        in_place_.insert(name);
        continue;
      }
    }
    CEDANA_RETURN_IF_ERROR(SendFileReply(conn.get(), found));
    if (!found) continue;
    char dummy;
    CEDANA_RETURN_IF_ERROR(RecvExact(conn.get(), &dummy, 1, &fds));
    if (fds.empty()) return AbortedError("criu asked for " + name + " without a pipe");
    auto pipe = std::make_shared<UniqueFd>(std::move(fds.front()));
    fds.pop_front();
    log::Debug("engine: serving {} to criu", name);
    std::lock_guard lock(mu_);
    senders_.emplace_back([this, name, pipe] {
      Status sent = source_->Send(name, pipe->get());
      if (!sent.ok()) log::Debug("engine: serving {}: {}", name, sent.ToString());
      pipe->Reset();
    });
  }
}

void ImageServe::Stop() {
  if (wake_write_.valid()) {
    char b = 1;
    (void)!::write(wake_write_.get(), &b, 1);
  }
  if (thread_.joinable()) thread_.join();
  std::vector<std::thread> senders;
  {
    std::lock_guard lock(mu_);
    senders.swap(senders_);
  }
  for (std::thread& t : senders) t.join();
}

size_t ImageServe::ImagesInPlace() {
  std::lock_guard lock(mu_);
  return in_place_.size();
}

}  // namespace cedana::engine
