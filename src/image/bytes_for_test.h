// Test helpers for the image pipeline: in-memory sinks/sources and generated data.
// Test-only; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "common/fs.h"
#include "storage/byte_io.h"

namespace cedana::image::testing {

// Appends to a string the test owns.
class StringSink : public storage::ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Write(const void* data, size_t size) override {
    out_->append(static_cast<const char*>(data), size);
    return OkStatus();
  }
  Status Close() override {
    closed_ = true;
    return OkStatus();
  }
  bool closed() const { return closed_; }

 private:
  std::string* out_;
  bool closed_ = false;
};

// Yields a string in reads of at most `max_read` bytes (to exercise partial reads).
class StringSource : public storage::ByteSource {
 public:
  explicit StringSource(std::string data, size_t max_read = SIZE_MAX)
      : data_(std::move(data)), max_read_(max_read) {}
  Result<size_t> Read(void* data, size_t size) override {
    size_t n = std::min({size, max_read_, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, n, static_cast<char*>(data));
    pos_ += n;
    return n;
  }

 private:
  std::string data_;
  size_t max_read_;
  size_t pos_ = 0;
};

inline std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

// Text-like data that compresses well.
inline std::string CompressibleBytes(size_t size) {
  std::string out;
  out.reserve(size);
  for (size_t i = 0; out.size() < size; ++i) out += "page " + std::to_string(i % 977) + " zero ";
  out.resize(size);
  return out;
}

// Runs a shell command and returns its stdout (empty on failure).
inline std::string RunCommand(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace cedana::image::testing
