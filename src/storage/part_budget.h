// PartBudget: the part buffers that the streams of one opened store share, so that their memory
// stays within a limit whatever the number of streams. An S3 stream needs one part buffer to
// work at all and waits for one when every part is taken; it takes a second one, to upload a
// part (or fetch the next range) while the first is being filled (or read), only when a part is
// free and no stream is waiting for its first. Thread-safe.
//
// No deadlock: a stream never waits for a part while holding one (its first is taken before
// anything else, its second only when free), and a stream holding a part needs nothing from the
// streams still waiting to finish. So one thread must not have two streams of one store open
// at once (it could wait for a part while holding one): every pack and unpack gives each stream
// its own thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace cedana::storage {

class PartBudget : public std::enable_shared_from_this<PartBudget> {
 public:
  // Whole parts of `part_bytes` within `limit_bytes`, at least one (a stream must make progress).
  static std::shared_ptr<PartBudget> Create(uint64_t limit_bytes, uint64_t part_bytes);

  // One part taken from the budget until it is destroyed (or reset by moving from it).
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept : budget_(std::move(other.budget_)) {}
    Lease& operator=(Lease&& other) noexcept;
    ~Lease() { Release(); }
    explicit operator bool() const { return budget_ != nullptr; }
    void Release();

   private:
    friend class PartBudget;
    explicit Lease(std::shared_ptr<PartBudget> budget) : budget_(std::move(budget)) {}
    std::shared_ptr<PartBudget> budget_;
  };

  // A stream's first part: waits until one is free.
  Lease TakeFirst();
  // A stream's second part: an empty lease unless one is free and no stream waits for its first.
  Lease TrySecond();

  uint64_t limit_bytes() const { return part_bytes_ * parts_; }
  // The most parts' bytes leased at once so far.
  uint64_t peak_bytes() const;

 private:
  PartBudget(uint64_t parts, uint64_t part_bytes) : parts_(parts), part_bytes_(part_bytes) {}
  void Give();

  const uint64_t parts_;
  const uint64_t part_bytes_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  uint64_t leased_ = 0;
  uint64_t peak_ = 0;
  int waiting_ = 0;
};

}  // namespace cedana::storage
