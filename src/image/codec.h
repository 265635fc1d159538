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

// The frames in `compressed`, already in memory, decoded into out[0, capacity) in one call: the
// bytes they hold, or `capacity` when they hold that many or more (the rest is not decoded; a
// caller that must refuse longer data passes one byte more than it expects). Errors as
// DecompressingSource's. Unlike a source, it neither allocates an input buffer nor copies the
// input into one, and lz4 and zstd decode straight into `out`: what a deduplicated restore does
// for every chunk, a thousand times per GiB.
Result<size_t> DecompressInto(Codec codec, std::string_view compressed, char* out, size_t capacity);

}  // namespace cedana::image
