// Stream taps: pass-through ByteSink/ByteSource wrappers that observe the bytes of one stream
// on their way (digest and count of the stored bytes; raw byte count for progress), plus the
// progress reporter the taps of all streams feed. A tap is used by one thread; the
// ProgressReporter is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "image/checksum.h"
#include "image/pack.h"
#include "storage/byte_io.h"

namespace cedana::image {

// Sums raw bytes over all streams and calls the callback at most every kInterval (and once at
// Finish). The callback may run on any stream's thread.
class ProgressReporter {
 public:
  ProgressReporter(const ProgressFn& fn, uint64_t total) : fn_(fn), total_(total) {}
  void Add(uint64_t n);
  // Reports the final count (also when under the throttle interval).
  void Finish();

 private:
  const ProgressFn& fn_;
  const uint64_t total_;
  std::atomic<uint64_t> done_{0};
  std::atomic<int64_t> last_report_ns_{0};
};

// Hashes and counts what goes through to `out` (the bytes as stored).
class HashingSink : public storage::ByteSink {
 public:
  HashingSink(std::unique_ptr<storage::ByteSink> out, Digest digest)
      : out_(std::move(out)), hash_(digest) {}
  Status Write(const void* data, size_t size) override;
  Status Close() override { return out_->Close(); }
  uint64_t bytes() const { return bytes_; }
  std::string FinalHex() { return hash_.FinalHex(); }

 private:
  std::unique_ptr<storage::ByteSink> out_;
  Hasher hash_;
  uint64_t bytes_ = 0;
};

// Hashes and counts what is read from `in` (the bytes as stored).
class HashingSource : public storage::ByteSource {
 public:
  HashingSource(std::unique_ptr<storage::ByteSource> in, Digest digest)
      : in_(std::move(in)), hash_(digest) {}
  Result<size_t> Read(void* data, size_t size) override;
  // Reads `in` to its end (after a failure downstream), so the digest covers every byte.
  Status Drain();
  uint64_t bytes() const { return bytes_; }
  std::string FinalHex() { return hash_.FinalHex(); }

 private:
  std::unique_ptr<storage::ByteSource> in_;
  Hasher hash_;
  uint64_t bytes_ = 0;
};

// Hashes what goes through to `out` until Seal() (the StreamHead), then only passes it on.
class HeadHashingSink : public storage::ByteSink {
 public:
  HeadHashingSink(std::unique_ptr<storage::ByteSink> out, Digest digest)
      : out_(std::move(out)), hash_(digest) {}
  Status Write(const void* data, size_t size) override;
  Status Close() override { return out_->Close(); }
  // The head is what was written so far. Call once.
  StreamHead Seal();

 private:
  std::unique_ptr<storage::ByteSink> out_;
  Hasher hash_;
  uint64_t bytes_ = 0;
  bool sealed_ = false;
};

// Checks the head of what is read from `in` against `want`: reads stop exactly at the head's
// end, its digest is compared there, and a mismatch (or a stream that ends inside the head)
// fails the read with kAborted. `verified` runs once, on the reading thread, when the head
// matched and the reader asks for what follows it (so it has used all of the head).
class HeadVerifyingSource : public storage::ByteSource {
 public:
  HeadVerifyingSource(std::unique_ptr<storage::ByteSource> in, StreamHead want, Digest digest,
                      std::function<void()> verified)
      : in_(std::move(in)), want_(std::move(want)), verified_(std::move(verified)), hash_(digest) {}
  Result<size_t> Read(void* data, size_t size) override;

 private:
  std::unique_ptr<storage::ByteSource> in_;
  StreamHead want_;
  std::function<void()> verified_;
  Hasher hash_;
  uint64_t bytes_ = 0;
  bool done_ = false;
  bool notify_pending_ = false;
};

// Counts raw bytes into a ProgressReporter, and fails (kAborted) once `cancel` is set, so the
// other streams stop soon after one fails.
class CountingSink : public storage::ByteSink {
 public:
  CountingSink(std::unique_ptr<storage::ByteSink> out, ProgressReporter* progress,
               const std::atomic<bool>* cancel)
      : out_(std::move(out)), progress_(progress), cancel_(cancel) {}
  Status Write(const void* data, size_t size) override;
  Status Close() override;
  uint64_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<storage::ByteSink> out_;
  ProgressReporter* progress_;
  const std::atomic<bool>* cancel_;
  uint64_t bytes_ = 0;
};

class CountingSource : public storage::ByteSource {
 public:
  CountingSource(std::unique_ptr<storage::ByteSource> in, ProgressReporter* progress,
                 const std::atomic<bool>* cancel)
      : in_(std::move(in)), progress_(progress), cancel_(cancel) {}
  Result<size_t> Read(void* data, size_t size) override;
  uint64_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<storage::ByteSource> in_;
  ProgressReporter* progress_;
  const std::atomic<bool>* cancel_;
  uint64_t bytes_ = 0;
};

// The kAborted a tap returns after cancellation.
Status CancelledError();

}  // namespace cedana::image
