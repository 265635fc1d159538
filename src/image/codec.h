// The codecs of a checkpoint's streams (their names: common/codec_names.h). Stateless helpers;
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/codec_names.h"
#include "common/result.h"
#include "storage/byte_io.h"

namespace cedana::image {

// A sink that compresses into `out` (gzip output is a standard gzip member, readable by
// `gzip -d`; lz4 is the lz4 frame format, zstd a zstd frame). Close() finishes the frame and
// closes `out`. `level` is the codec's own; for lz4 a negative level is its fast mode with
// acceleration -level (as `lz4 --fast=N`), which CodecLevel gives.
std::unique_ptr<storage::ByteSink> CompressingSink(Codec codec,
                                                   std::unique_ptr<storage::ByteSink> out,
                                                   int level = 1);
// The level a checkpoint's codec compresses at: 1, or for lz4 with checkpoint.lz4_acceleration
// above 1 its fast mode at that acceleration (1 to kMaxLz4Acceleration).
inline constexpr int kMaxLz4Acceleration = 64;
int CodecLevel(Codec codec, int lz4_acceleration);

// A source that decompresses what `in` yields; a corrupt frame is kDataLoss-like kAborted.
std::unique_ptr<storage::ByteSource> DecompressingSource(Codec codec,
                                                         std::unique_ptr<storage::ByteSource> in);

}  // namespace cedana::image
