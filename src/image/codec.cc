#include "image/codec.h"

#include <algorithm>

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

namespace internal {
Status CorruptError(std::string_view codec, std::string_view what) {
  return AbortedError(fmt::format("{}: corrupt data: {}", codec, what));
}
}  // namespace internal

}  // namespace cedana::image
