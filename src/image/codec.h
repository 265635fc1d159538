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
// closes `out`.
std::unique_ptr<storage::ByteSink> CompressingSink(Codec codec,
                                                   std::unique_ptr<storage::ByteSink> out,
                                                   int level = 1);
// A source that decompresses what `in` yields; a corrupt frame is kDataLoss-like kAborted.
std::unique_ptr<storage::ByteSource> DecompressingSource(Codec codec,
                                                         std::unique_ptr<storage::ByteSource> in);

}  // namespace cedana::image
