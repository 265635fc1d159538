// ChunkSet: the chunks one deduplicated pack deals with (image/chunk_pack.h,
// image/direct_chunk_pack.h): which of them the label's store held when the pack began or this
// pack has claimed to store, and the totals of what it stored. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace cedana::image {

class ChunkSet {
 public:
  explicit ChunkSet(const std::vector<std::string>& stored)
      : known_(stored.begin(), stored.end()) {}
  // True once per digest the store does not hold: the caller stores it.
  bool Claim(const std::string& digest) {
    std::lock_guard lock(mu_);
    return known_.insert(digest).second;
  }
  void Stored(uint64_t stored_bytes) {
    std::lock_guard lock(mu_);
    ++new_chunks_;
    new_stored_bytes_ += stored_bytes;
  }
  uint64_t new_chunks() const {
    std::lock_guard lock(mu_);
    return new_chunks_;
  }
  uint64_t new_stored_bytes() const {
    std::lock_guard lock(mu_);
    return new_stored_bytes_;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<std::string> known_;           // guarded by mu_
  uint64_t new_chunks_ = 0, new_stored_bytes_ = 0;  // guarded by mu_
};

}  // namespace cedana::image
