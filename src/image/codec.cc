#include "image/codec.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "image/codec_internal.h"

namespace cedana::image {

int CodecLevel(Codec codec, int lz4_acceleration) {
  if (codec != Codec::kLz4 || lz4_acceleration <= 1) return 1;
  return -std::min(lz4_acceleration, kMaxLz4Acceleration);
}

std::unique_ptr<storage::ByteSink> CompressingSink(Codec codec,
                                                   std::unique_ptr<storage::ByteSink> out,
                                                   int level) {
  switch (codec) {
    case Codec::kNone: return out;
    case Codec::kGzip: return internal::GzipSink(std::move(out), level);
    case Codec::kLz4: return internal::Lz4Sink(std::move(out), level);
    case Codec::kZstd: return internal::ZstdSink(std::move(out), level);
  }
  return out;
}

std::unique_ptr<storage::ByteSource> DecompressingSource(Codec codec,
                                                         std::unique_ptr<storage::ByteSource> in) {
  switch (codec) {
    case Codec::kNone: return in;
    case Codec::kGzip: return internal::GzipSource(std::move(in));
    case Codec::kLz4: return internal::Lz4Source(std::move(in));
    case Codec::kZstd: return internal::ZstdSource(std::move(in));
  }
  return in;
}

namespace {

class MemorySource : public storage::ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  Result<size_t> Read(void* out, size_t size) override {
    size_t n = std::min(size, data_.size());
    std::memcpy(out, data_.data(), n);
    data_.remove_prefix(n);
    return n;
  }

 private:
  std::string_view data_;
};

}  // namespace

Result<size_t> DecompressInto(Codec codec, std::string_view compressed, char* out,
                              size_t capacity) {
  switch (codec) {
    case Codec::kLz4: return internal::Lz4DecompressInto(compressed, out, capacity);
    case Codec::kZstd: return internal::ZstdDecompressInto(compressed, out, capacity);
    case Codec::kNone:
    case Codec::kGzip: break;
  }
  // gzip through its source: inflating costs far more than the source's buffer.
  auto source = DecompressingSource(codec, std::make_unique<MemorySource>(compressed));
  size_t got = 0;
  while (got < capacity) {
    CEDANA_ASSIGN_OR_RETURN(size_t n, source->Read(out + got, capacity - got));
    if (n == 0) break;
    got += n;
  }
  return got;
}

namespace internal {
Status CorruptError(std::string_view codec, std::string_view what) {
  return AbortedError(fmt::format("{}: corrupt data: {}", codec, what));
}
}  // namespace internal

}  // namespace cedana::image
