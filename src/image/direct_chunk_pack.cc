// DirectChunkPack: pages images -> the label's chunks as they arrive, within a memory limit.
#include "image/direct_chunk_pack.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"
#include "image/checksum.h"
#include "image/chunk_codec.h"
#include "image/chunk_pack.h"
#include "image/chunking.h"
#include "image/compressibility.h"
#include "image/huge_pages.h"
#include "image/pack.h"

namespace cedana::image {

Result<std::unique_ptr<DirectChunkPack>> DirectChunkPack::Start(storage::CheckpointStore& store,
                                                                const storage::CheckpointRef& ref,
                                                                DirectChunkPackOptions options) {
  if (options.memory_limit < kChunkRegionBytes)
    return InvalidArgumentError(fmt::format("memory limit {} is below one region ({} bytes)",
                                            options.memory_limit, kChunkRegionBytes));
  options.threads = std::max(1, options.threads);
  CEDANA_ASSIGN_OR_RETURN(auto stored, store.ListChunks(ref.owner, ref.label));
  CEDANA_ASSIGN_OR_RETURN(auto writer, store.WriteChunks(ref.owner, ref.label));
  std::unique_ptr<DirectChunkPack> pack(
      new DirectChunkPack(store, ref, options, std::move(stored), std::move(writer)));
  DirectChunkPack* p = pack.get();
  // The runner thread creates the workers; both inherit this thread's identity.
  p->runner_ = std::jthread([p] {
    p->group_status_ = p->group_.Run(p->options_.threads, [p](int) -> Status {
      Status s = p->RunWorker();
      if (s.ok()) return s;
      std::lock_guard lock(p->mu_);
      if (p->abort_) return OkStatus();  // stopped on purpose: no failure of the store
      // A worker that stopped because another failed: the first failure is the one to report.
      if (p->worker_failed_) return OkStatus();
      p->worker_failed_ = true;
      p->space_cv_.notify_all();
      p->work_cv_.notify_all();
      return s;
    });
  });
  return pack;
}

DirectChunkPack::DirectChunkPack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                                 DirectChunkPackOptions options, std::vector<std::string> stored,
                                 std::unique_ptr<storage::ChunkWriter> writer)
    : store_(store),
      ref_(std::move(ref)),
      options_(std::move(options)),
      writer_(std::move(writer)),
      chunks_(stored),
      group_([](int i) { return fmt::format("chunk worker {}", i); }) {}

DirectChunkPack::~DirectChunkPack() {
  if (!stopped_) (void)Abort();
}

Status DirectChunkPack::RunWorker() {
  for (;;) {
    Region region;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return abort_ || worker_failed_ || !queue_.empty() || closed_; });
      if (abort_) return AbortedError("direct chunk pack aborted");
      if (worker_failed_) return CancelledError();
      if (queue_.empty()) return OkStatus();  // closed and drained
      region = std::move(queue_.front());
      queue_.pop_front();
    }
    Status s = CutRegion(region);
    {
      std::lock_guard lock(mu_);
      region.data.clear();
      pool_.push_back(std::move(region.data));
      --held_;
      space_cv_.notify_all();
    }
    CEDANA_RETURN_IF_ERROR(s) << "region " << region.number << " of " << region.name;
  }
}

Status DirectChunkPack::CutRegion(Region& region) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(region.data.data());
  std::vector<ChunkEntry> entries;
  size_t at = 0;
  for (size_t length : ChunkLengths(bytes, region.data.size())) {
    std::string_view chunk(region.data.data() + at, length);
    std::string digest = DigestHex(kNewDigest, chunk);
    if (chunks_.Claim(digest)) {
      CEDANA_ASSIGN_OR_RETURN(std::string stored, EncodeChunk(chunk, region.codec, options_.level));
      CEDANA_RETURN_IF_ERROR(writer_->Put(digest, stored)) << "storing a chunk";
      chunks_.Stored(stored.size());
    }
    entries.push_back({std::move(digest), length});
    at += length;
  }
  std::lock_guard lock(mu_);
  cut_[region.file][region.number] = std::move(entries);
  return OkStatus();
}

Result<int> DirectChunkPack::OpenFile(const std::string& name) {
  if (!IsPagesImage(name))
    return InvalidArgumentError("image file \"" + name + "\" is not a pages image");
  for (const IncomingFile& f : files_)
    if (f.name == name) return InvalidArgumentError("image file " + name + " received twice");
  IncomingFile f;
  f.name = name;
  f.codec = options_.codec;
  files_.push_back(std::move(f));
  std::lock_guard lock(mu_);
  cut_.emplace_back();
  ++stats_.files;
  return static_cast<int>(files_.size() - 1);
}

void DirectChunkPack::QueueRegionLocked(int file) {
  IncomingFile& f = files_[file];
  if (!f.judged) {
    // The first region decides for the file: memory that does not compress (arrays of doubles)
    // then costs no compression time, as in PackChunks. A codec that fails here fails on the
    // chunks too, which reports it.
    f.judged = true;
    auto verdict = JudgeCompressibilityOf(options_.codec, options_.level,
                                          std::string_view(f.buf.data(), f.buf.size()));
    if (verdict.has_value() && !verdict->compress) {
      log::Info("image: {} stored raw: {} compressed {} KiB of samples to {} KiB", f.name,
                CodecName(options_.codec), verdict->sampled_bytes >> 10,
                verdict->compressed_bytes >> 10);
      f.codec = Codec::kNone;
    }
  }
  Region region{file, f.regions++, f.name, f.codec, std::move(f.buf)};
  f.buf = {};
  if (cut_[file].size() < f.regions) cut_[file].resize(f.regions);
  queue_.push_back(std::move(region));
  work_cv_.notify_one();
}

Status DirectChunkPack::ReserveRegionLocked(std::unique_lock<std::mutex>& lock) {
  auto start = std::chrono::steady_clock::now();
  bool waited = false;
  while (!worker_failed_ &&
         static_cast<uint64_t>(held_ + 1) * kChunkRegionBytes > options_.memory_limit) {
    int receiving = 0;
    for (const IncomingFile& f : files_) receiving += f.buf.capacity() > 0;
    if (queue_.empty() && held_ == receiving) {
      // Every buffer is a partly received region and no worker would free one: cut the fullest
      // now (its chunk ends early), or this would wait forever.
      int fullest = -1;
      for (size_t i = 0; i < files_.size(); ++i)
        if (files_[i].open && !files_[i].buf.empty() &&
            (fullest < 0 || files_[i].buf.size() > files_[fullest].buf.size()))
          fullest = static_cast<int>(i);
      if (fullest < 0) break;  // cannot happen with a limit of at least one region
      QueueRegionLocked(fullest);
    }
    waited = true;
    space_cv_.wait(lock);
  }
  if (waited)
    stats_.waited += std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
  if (worker_failed_) return AbortedError("a chunk worker of the checkpoint failed");
  ++held_;
  stats_.peak_buffered = std::max<uint64_t>(stats_.peak_buffered, held_ * kChunkRegionBytes);
  return OkStatus();
}

Status DirectChunkPack::Append(int file, const void* data, size_t size) {
  if (file < 0 || file >= static_cast<int>(files_.size()) || !files_[file].open)
    return InternalError(fmt::format("direct chunk pack: file {} is not open", file));
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    IncomingFile& f = files_[file];
    if (f.buf.capacity() == 0) {
      std::vector<char> buf;
      std::unique_lock lock(mu_);
      CEDANA_RETURN_IF_ERROR(ReserveRegionLocked(lock));
      if (!pool_.empty()) {
        buf = std::move(pool_.back());
        pool_.pop_back();
      }
      lock.unlock();
      if (buf.capacity() < kChunkRegionBytes) {
        buf.reserve(kChunkRegionBytes);
        AdviseHugePages(buf.data(), buf.capacity());
      }
      f.buf = std::move(buf);
    }
    size_t n = std::min<size_t>(size, kChunkRegionBytes - f.buf.size());
    f.buf.insert(f.buf.end(), p, p + n);
    f.size += n;
    p += n;
    size -= n;
    std::lock_guard lock(mu_);
    stats_.file_bytes += n;
    if (f.buf.size() == kChunkRegionBytes) QueueRegionLocked(file);
  }
  return OkStatus();
}

Status DirectChunkPack::CloseFile(int file) {
  if (file < 0 || file >= static_cast<int>(files_.size()) || !files_[file].open)
    return InternalError(fmt::format("direct chunk pack: file {} is not open", file));
  IncomingFile& f = files_[file];
  f.open = false;
  std::lock_guard lock(mu_);
  if (worker_failed_) return AbortedError("a chunk worker of the checkpoint failed");
  if (!f.buf.empty()) QueueRegionLocked(file);
  return OkStatus();
}

Status DirectChunkPack::Stop(bool finish) {
  stopped_ = true;
  {
    std::lock_guard lock(mu_);
    if (finish) closed_ = true;
    else abort_ = true;
    work_cv_.notify_all();
  }
  if (runner_.joinable()) runner_.join();
  return group_status_;
}

Result<ChunkIndexInfo> DirectChunkPack::Finish() {
  for (const IncomingFile& f : files_) {
    if (f.open) {
      (void)Stop(false);
      return InternalError("direct chunk pack: " + f.name + " was not complete");
    }
  }
  CEDANA_RETURN_IF_ERROR(Stop(true)) << "cutting the memory pages into chunks of " << ref_.Path();
  CEDANA_RETURN_IF_ERROR(writer_->Publish()) << "storing the chunks of " << ref_.Path();
  ChunkIndex index;
  for (size_t i = 0; i < files_.size(); ++i) {
    ChunkedFile& out = index.files.emplace_back(ChunkedFile{files_[i].name, files_[i].size, {}});
    for (std::vector<ChunkEntry>& region : cut_[i])
      std::move(region.begin(), region.end(), std::back_inserter(out.chunks));
  }
  CEDANA_ASSIGN_OR_RETURN(ChunkIndexInfo info, WriteChunkIndex(store_, ref_, index));
  // Written first, so that a sweep from now on keeps its chunks; then checked, for a sweep that
  // ran before. Unlike PackChunks this pack has no images dir to store a removed chunk again from.
  CEDANA_ASSIGN_OR_RETURN(auto missing, MissingChunks(store_, ref_, index));
  if (!missing.empty())
    return AbortedError(fmt::format(
        "{} chunk(s) of label {} that checkpoint {} names were removed while it was stored (a "
        "checkpoint of the label was deleted meanwhile), and a direct dump keeps no copy of "
        "them; the next checkpoint stores them again",
        missing.size(), ref_.label, ref_.id));
  info.new_chunks = chunks_.new_chunks();
  info.new_stored_bytes = chunks_.new_stored_bytes();
  return info;
}

Status DirectChunkPack::Abort() {
  if (stopped_) return group_status_;
  return Stop(false);
}

DirectChunkPackStats DirectChunkPack::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace cedana::image
