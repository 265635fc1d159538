#include "image/stream_taps.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace cedana::image {
namespace {

constexpr std::chrono::milliseconds kProgressInterval{200};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status CancelledError() { return AbortedError("cancelled because another stream failed"); }

void ProgressReporter::Add(uint64_t n) {
  uint64_t done = done_.fetch_add(n, std::memory_order_relaxed) + n;
  if (!fn_) return;
  int64_t now = NowNs();
  int64_t last = last_report_ns_.load(std::memory_order_relaxed);
  if (now - last < std::chrono::nanoseconds(kProgressInterval).count()) return;
  // One thread wins the interval; the others skip instead of piling up calls.
  if (last_report_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    fn_(done, total_);
  }
}

void ProgressReporter::Finish() {
  if (fn_) fn_(done_.load(), total_);
}

Status HashingSink::Write(const void* data, size_t size) {
  hash_.Update(data, size);
  bytes_ += size;
  return out_->Write(data, size);
}

Result<size_t> HashingSource::Read(void* data, size_t size) {
  CEDANA_ASSIGN_OR_RETURN(size_t n, in_->Read(data, size));
  hash_.Update(data, n);
  bytes_ += n;
  return n;
}

Status HashingSource::Drain() {
  std::vector<char> buf(size_t{1} << 20);
  for (;;) {
    CEDANA_ASSIGN_OR_RETURN(size_t n, Read(buf.data(), buf.size()));
    if (n == 0) return OkStatus();
  }
}

Status HeadHashingSink::Write(const void* data, size_t size) {
  if (!sealed_) {
    hash_.Update(data, size);
    bytes_ += size;
  }
  return out_->Write(data, size);
}

StreamHead HeadHashingSink::Seal() {
  sealed_ = true;
  return StreamHead{bytes_, hash_.FinalHex()};
}

Result<size_t> HeadVerifyingSource::Read(void* data, size_t size) {
  if (done_) {
    // The reader is back for what follows the head: it has used (written) all of the head.
    if (notify_pending_) {
      notify_pending_ = false;
      if (verified_) verified_();
    }
    return in_->Read(data, size);
  }
  // Never read past the head's end: its digest is compared before anything after it is used.
  size_t want = static_cast<size_t>(std::min<uint64_t>(size, want_.raw_bytes - bytes_));
  size_t n = 0;
  if (want > 0) {
    CEDANA_ASSIGN_OR_RETURN(n, in_->Read(data, want));
    if (n == 0) return AbortedError("stream ends inside its head (truncated)");
    hash_.Update(data, n);
    bytes_ += n;
  }
  if (bytes_ == want_.raw_bytes) {
    done_ = true;
    if (hash_.FinalHex() != want_.digest)
      return AbortedError("checksum mismatch in the stream's head (stored data altered)");
    notify_pending_ = true;
    if (n == 0) return Read(data, size);  // an empty head
  }
  return n;
}

Status CountingSink::Write(const void* data, size_t size) {
  if (cancel_->load(std::memory_order_relaxed)) return CancelledError();
  CEDANA_RETURN_IF_ERROR(out_->Write(data, size));
  bytes_ += size;
  progress_->Add(size);
  return OkStatus();
}

Status CountingSink::Close() {
  if (cancel_->load(std::memory_order_relaxed)) return CancelledError();
  return out_->Close();
}

Result<size_t> CountingSource::Read(void* data, size_t size) {
  if (cancel_->load(std::memory_order_relaxed)) return CancelledError();
  CEDANA_ASSIGN_OR_RETURN(size_t n, in_->Read(data, size));
  bytes_ += n;
  progress_->Add(n);
  return n;
}

}  // namespace cedana::image
