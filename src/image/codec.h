// Codec: how each stream of a checkpoint is compressed. Stateless helpers; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "storage/byte_stream.h"

namespace cedana::image {

enum class Codec { kNone, kGzip, kLz4, kZstd };

// "none", "gzip", "lz4", "zstd". kInvalidArgument names the bad value and the valid ones.
Result<Codec> ParseCodec(std::string_view name);
std::string_view CodecName(Codec codec);

// A sink that compresses into `out` (gzip output is a standard gzip member, readable by
// `gzip -d`; lz4 is the lz4 frame format, zstd a zstd frame). Close() finishes the frame and
// closes `out`.
std::unique_ptr<storage::ByteSink> CompressingSink(Codec codec,
                                                   std::unique_ptr<storage::ByteSink> out,
                                                   int level = 1);
// A source that decompresses what `in` yields; a corrupt frame is kDataLoss-like kAborted.
std::unique_ptr<storage::ByteSource> DecompressingSource(Codec codec,
                                                         std::unique_ptr<storage::ByteSource> in);

}  // namespace cedana::image
