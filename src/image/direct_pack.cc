// DirectPack: image files -> N tar streams as they arrive, within a memory limit.
#include "image/direct_pack.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/checkpoint_streams.h"
#include "common/log.h"
#include "image/huge_pages.h"
#include "image/tar.h"

namespace cedana::image {
namespace {

// "@" and 16 digits: a file name must leave room for its part names.
constexpr size_t kPartSuffixLength = 17;
// Most of CRIU's images are below this; they get a buffer of this size, the others part buffers.
constexpr uint64_t kSmallFileBytes = 1 << 20;

}  // namespace

Result<std::unique_ptr<DirectPack>> DirectPack::Start(storage::CheckpointStore& store,
                                                      const storage::CheckpointRef& ref,
                                                      DirectPackOptions options) {
  if (options.streams < 1 || options.streams > kMaxCheckpointStreams) {
    return InvalidArgumentError(fmt::format("streams must be between 1 and {}, got {}",
                                            kMaxCheckpointStreams, options.streams));
  }
  if (options.part_bytes == 0 || options.memory_limit < options.part_bytes) {
    return InvalidArgumentError(fmt::format("memory limit {} is below one part ({} bytes)",
                                            options.memory_limit, options.part_bytes));
  }
  std::unique_ptr<DirectPack> pack(new DirectPack(store, ref, std::move(options)));
  DirectPack* p = pack.get();
  // The runner thread creates the stream threads; both inherit this thread's identity.
  p->runner_ = std::jthread([p] {
    p->group_status_ = p->group_.Run(p->options_.streams, [p](int i) -> Status {
      Result<StreamInfo> info = p->RunStream(i);
      if (!info.has_value()) {
        std::lock_guard lock(p->mu_);
        if (p->abort_) return OkStatus();  // stopped on purpose: no failure of the store
        // A stream that stopped because another failed: the first failure is the one to report.
        if (p->stream_failed_) return OkStatus();
        p->stream_failed_ = true;
        p->space_cv_.notify_all();
        p->work_cv_.notify_all();
        return info.error();
      }
      p->infos_[i] = std::move(info).value();
      return OkStatus();
    });
  });
  return pack;
}

DirectPack::DirectPack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                       DirectPackOptions options)
    : store_(store),
      ref_(std::move(ref)),
      options_(std::move(options)),
      progress_(options_.progress, 0),
      group_([](int i) { return fmt::format("stream-{}", i); }),
      infos_(options_.streams) {}

DirectPack::~DirectPack() {
  if (!stopped_) (void)Abort();
}

Result<StreamInfo> DirectPack::RunStream(int index) {
  CEDANA_ASSIGN_OR_RETURN(auto store_sink, store_.CreateStream(ref_, index));
  auto hashing = std::make_unique<HashingSink>(std::move(store_sink), kNewDigest);
  HashingSink* stored = hashing.get();
  CountingSink raw(CompressingSink(options_.codec, std::move(hashing), options_.level), &progress_,
                   group_.cancel_flag());
  TarWriter tar(&raw);
  for (;;) {
    Entry entry;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return abort_ || stream_failed_ || !queue_.empty() || closed_; });
      if (abort_) return AbortedError("direct pack aborted");
      if (stream_failed_) return CancelledError();
      if (queue_.empty()) break;  // closed and drained
      entry = std::move(queue_.front());
      queue_.pop_front();
      ++writing_;
    }
    Status s = tar.AddBytes(entry.name, entry.data.data(), entry.data.size());
    {
      std::lock_guard lock(mu_);
      --writing_;
      buffered_ -= entry.data.size();
      if (entry.data.capacity() >= options_.part_bytes &&
          pool_.size() < options_.memory_limit / options_.part_bytes) {
        entry.data.clear();
        pool_.push_back(std::move(entry.data));
      }
      space_cv_.notify_all();
    }
    CEDANA_RETURN_IF_ERROR(s) << "packing " << entry.name;
  }
  CEDANA_RETURN_IF_ERROR(tar.Finish());
  CEDANA_RETURN_IF_ERROR(raw.Close());
  return StreamInfo{fmt::format("stream-{}", index),
                    raw.bytes(),
                    stored->bytes(),
                    stored->FinalHex(),
                    {}};  // CRIU's order: no head
}

Result<int> DirectPack::OpenFile(const std::string& name) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image file \"" + name + "\": unsafe name");
  if (name.size() + kPartSuffixLength > kTarMaxNameLength) {
    return InvalidArgumentError(fmt::format("image file {}: name longer than {} bytes", name,
                                            kTarMaxNameLength - kPartSuffixLength));
  }
  for (const IncomingFile& f : files_) {
    if (f.name == name) return InvalidArgumentError("image file " + name + " received twice");
  }
  IncomingFile f;
  f.name = name;
  files_.push_back(std::move(f));
  std::lock_guard lock(mu_);
  ++stats_.files;
  return static_cast<int>(files_.size() - 1);
}

void DirectPack::QueuePartLocked(IncomingFile& f) {
  uint64_t size = f.buf.size();
  queue_.push_back(Entry{TarPartName(f.name, f.offset), std::move(f.buf)});
  f.buf = {};
  f.offset += size;
  f.parted = true;
  work_cv_.notify_one();
}

Status DirectPack::ReserveLocked(std::unique_lock<std::mutex>& lock, size_t size) {
  auto start = std::chrono::steady_clock::now();
  bool waited = false;
  while (!stream_failed_ && buffered_ + size > options_.memory_limit) {
    if (queue_.empty() && writing_ == 0) {
      // All the memory sits in partly received files and nothing being written would free
      // any: send the largest as a part, or this would wait forever.
      IncomingFile* largest = nullptr;
      for (IncomingFile& f : files_)
        if (f.open && (largest == nullptr || f.buf.size() > largest->buf.size())) largest = &f;
      if (largest == nullptr || largest->buf.empty()) break;  // only with a limit below `size`
      QueuePartLocked(*largest);
    }
    waited = true;
    space_cv_.wait(lock);
  }
  if (waited) {
    stats_.waited += std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
  }
  if (stream_failed_) return AbortedError("a stream of the checkpoint failed");
  buffered_ += size;
  stats_.peak_buffered = std::max(stats_.peak_buffered, buffered_);
  stats_.file_bytes += size;
  return OkStatus();
}

Status DirectPack::Append(int file, const void* data, size_t size) {
  if (file < 0 || file >= static_cast<int>(files_.size()) || !files_[file].open)
    return InternalError(fmt::format("direct pack: file {} is not open", file));
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    IncomingFile& f = files_[file];
    size_t n = std::min<uint64_t>(size, options_.part_bytes - f.buf.size());
    std::unique_lock lock(mu_);
    CEDANA_RETURN_IF_ERROR(ReserveLocked(lock, n));
    lock.unlock();
    if (f.buf.capacity() < f.buf.size() + n) {
      if (!f.parted && f.buf.size() + n <= kSmallFileBytes) {
        f.buf.reserve(kSmallFileBytes);
      } else {
        // A large file: a part buffer, from the pool when one is free.
        std::vector<char> part;
        lock.lock();
        if (!pool_.empty()) {
          part = std::move(pool_.back());
          pool_.pop_back();
        }
        lock.unlock();
        if (part.capacity() < options_.part_bytes) {
          part.reserve(options_.part_bytes);
          AdviseHugePages(part.data(), part.capacity());
        }
        part.insert(part.end(), f.buf.begin(), f.buf.end());
        f.buf.swap(part);
      }
    }
    f.buf.insert(f.buf.end(), p, p + n);
    p += n;
    size -= n;
    if (f.buf.size() == options_.part_bytes) {
      lock.lock();
      QueuePartLocked(f);
    }
  }
  return OkStatus();
}

Status DirectPack::CloseFile(int file) {
  if (file < 0 || file >= static_cast<int>(files_.size()) || !files_[file].open)
    return InternalError(fmt::format("direct pack: file {} is not open", file));
  IncomingFile& f = files_[file];
  f.open = false;
  std::lock_guard lock(mu_);
  if (stream_failed_) return AbortedError("a stream of the checkpoint failed");
  if (!f.parted) {
    queue_.push_back(Entry{f.name, std::move(f.buf)});
    work_cv_.notify_one();
  } else if (!f.buf.empty()) {
    QueuePartLocked(f);
  }
  f.buf = {};
  return OkStatus();
}

Status DirectPack::Stop(bool finish) {
  stopped_ = true;
  {
    std::lock_guard lock(mu_);
    if (finish) closed_ = true;
    else abort_ = true;
    work_cv_.notify_all();
  }
  if (runner_.joinable()) runner_.join();
  progress_.Finish();
  return group_status_;
}

Result<std::vector<StreamInfo>> DirectPack::Finish() {
  for (const IncomingFile& f : files_) {
    if (f.open) {
      (void)Stop(false);
      return InternalError("direct pack: " + f.name + " was not complete");
    }
  }
  CEDANA_RETURN_IF_ERROR(Stop(true)) << "packing into " << ref_.Path();
  return infos_;
}

Status DirectPack::Abort() {
  if (stopped_) return group_status_;
  return Stop(false);
}

DirectPackStats DirectPack::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace cedana::image
