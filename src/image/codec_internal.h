// Internals shared by the codec implementations (codec_*.cc): the per-codec sink/source
// factories and the input buffer every decompressing source pulls through. Not thread-safe:
// each object belongs to one stream's thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "storage/byte_io.h"

namespace cedana::image::internal {

// Large buffers: a stream moves gigabytes, and per-call overhead (syscalls, codec setup of a
// block) must stay negligible.
inline constexpr size_t kCodecBufferSize = size_t{1} << 20;

// Compressed input read from the underlying source in kCodecBufferSize pieces.
class InputBuffer {
 public:
  explicit InputBuffer(std::unique_ptr<storage::ByteSource> in)
      : in_(std::move(in)), buf_(kCodecBufferSize) {}

  const char* data() const { return buf_.data() + pos_; }
  size_t size() const { return len_ - pos_; }
  void Consume(size_t n) { pos_ += n; }
  bool eof() const { return eof_ && pos_ == len_; }
  // Reads more when the buffer is empty and the source is not at its end.
  Status RefillIfEmpty() {
    if (pos_ < len_ || eof_) return OkStatus();
    CEDANA_ASSIGN_OR_RETURN(size_t n, in_->Read(buf_.data(), buf_.size()));
    pos_ = 0;
    len_ = n;
    if (n == 0) eof_ = true;
    return OkStatus();
  }

 private:
  std::unique_ptr<storage::ByteSource> in_;
  std::vector<char> buf_;
  size_t pos_ = 0;
  size_t len_ = 0;
  bool eof_ = false;
};

// kAborted "<codec>: corrupt data: <what>": the stored bytes are not what was written.
Status CorruptError(std::string_view codec, std::string_view what);

std::unique_ptr<storage::ByteSink> GzipSink(std::unique_ptr<storage::ByteSink> out, int level);
std::unique_ptr<storage::ByteSource> GzipSource(std::unique_ptr<storage::ByteSource> in);
std::unique_ptr<storage::ByteSink> Lz4Sink(std::unique_ptr<storage::ByteSink> out, int level);
std::unique_ptr<storage::ByteSource> Lz4Source(std::unique_ptr<storage::ByteSource> in);
Result<size_t> Lz4DecompressInto(std::string_view in, char* out, size_t capacity);
Result<size_t> ZstdDecompressInto(std::string_view in, char* out, size_t capacity);
std::unique_ptr<storage::ByteSink> ZstdSink(std::unique_ptr<storage::ByteSink> out, int level);
std::unique_ptr<storage::ByteSource> ZstdSource(std::unique_ptr<storage::ByteSource> in);

}  // namespace cedana::image::internal
