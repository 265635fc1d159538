// Whether a stream is worth compressing: a few samples of what it will hold are compressed with
// the checkpoint's codec first. Memory that does not compress (arrays of doubles, encrypted or
// already compressed data) then costs no compression time, which at a codec's few hundred MB/s
// per core is most of a checkpoint's time, for the few percent it would save. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "image/codec.h"

namespace cedana::image {

// `length` bytes of the file at `path` from `offset`: what a stream holds, one item at a time.
struct ByteRange {
  std::string path;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct CompressibilityVerdict {
  bool compress = true;
  uint64_t sampled_bytes = 0;     // 0: too little data to judge, compressed as asked
  uint64_t compressed_bytes = 0;  // what the codec made of the samples
};

// Compression is kept when the samples shrink to less than this share of their size.
inline constexpr double kWorthCompressingRatio = 0.9;

// Reads up to four 256 KiB samples, one in the middle of each quarter of `ranges` laid end to
// end, and compresses each with `codec` at `level`. kNone is never worth compressing; a read
// error is returned (the file's path named), since the pack that follows would fail on it too.
Result<CompressibilityVerdict> JudgeCompressibility(Codec codec, int level,
                                                    const std::vector<ByteRange>& ranges);

// The same judgement of bytes in memory (a region of a pages image that a direct dump received).
Result<CompressibilityVerdict> JudgeCompressibilityOf(Codec codec, int level,
                                                      std::string_view data);

}  // namespace cedana::image
