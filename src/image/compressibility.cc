#include "image/compressibility.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "common/unique_fd.h"
#include "storage/byte_io.h"

namespace cedana::image {
namespace {

constexpr uint64_t kSampleBytes = 256 << 10;
constexpr int kSamples = 4;

// Counts what it is given and keeps nothing.
class CountingDiscardSink : public storage::ByteSink {
 public:
  explicit CountingDiscardSink(uint64_t* bytes) : bytes_(bytes) {}
  Status Write(const void*, size_t size) override {
    *bytes_ += size;
    return OkStatus();
  }
  Status Close() override { return OkStatus(); }

 private:
  uint64_t* bytes_;
};

Status ReadRange(const ByteRange& range, uint64_t offset, uint64_t length, std::string* out) {
  UniqueFd fd(::open(range.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open " + range.path);
  size_t start = out->size();
  out->resize(start + length);
  size_t got = 0;
  while (got < length) {
    ssize_t n = ::pread(fd.get(), out->data() + start + got, length - got,
                        static_cast<off_t>(range.offset + offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "read " + range.path);
    if (n == 0) break;  // shorter than planned: judge what is there
    got += static_cast<size_t>(n);
  }
  out->resize(start + got);
  return OkStatus();
}

// kSampleBytes from `at` in the ranges laid end to end (as the stream will hold them), or up to
// their end.
Result<std::string> ReadSample(const std::vector<ByteRange>& ranges, uint64_t at) {
  std::string data;
  for (const ByteRange& range : ranges) {
    if (data.size() >= kSampleBytes) break;
    if (at >= range.length) {
      at -= range.length;
      continue;
    }
    uint64_t take = std::min<uint64_t>(kSampleBytes - data.size(), range.length - at);
    CEDANA_RETURN_IF_ERROR(ReadRange(range, at, take, &data));
    at = 0;
  }
  return data;
}

// The judgement of `total` bytes whose sample at an offset `read_sample` gives.
Result<CompressibilityVerdict> Judge(
    Codec codec, int level, uint64_t total,
    const std::function<Result<std::string>(uint64_t at)>& read_sample) {
  CompressibilityVerdict verdict;
  if (codec == Codec::kNone) {
    verdict.compress = false;
    return verdict;
  }
  // Less than one sample's worth: compressing it costs nothing worth saving.
  if (total < kSampleBytes) return verdict;
  // One sample in the middle of each of `samples` equal segments: the small images at a
  // stream's head weigh as much as they hold, not a whole sample's share.
  int samples = static_cast<int>(std::min<uint64_t>(kSamples, total / kSampleBytes));
  uint64_t segment = total / samples;
  for (int i = 0; i < samples; ++i) {
    uint64_t at = i * segment + (segment - kSampleBytes) / 2;
    CEDANA_ASSIGN_OR_RETURN(std::string data, read_sample(at));
    auto sink = CompressingSink(
        codec, std::make_unique<CountingDiscardSink>(&verdict.compressed_bytes), level);
    CEDANA_RETURN_IF_ERROR(sink->Write(data.data(), data.size()));
    CEDANA_RETURN_IF_ERROR(sink->Close());
    verdict.sampled_bytes += data.size();
  }
  verdict.compress = verdict.sampled_bytes == 0 ||
                     static_cast<double>(verdict.compressed_bytes) <
                         kWorthCompressingRatio * static_cast<double>(verdict.sampled_bytes);
  return verdict;
}

}  // namespace

Result<CompressibilityVerdict> JudgeCompressibility(Codec codec, int level,
                                                    const std::vector<ByteRange>& ranges) {
  uint64_t total = 0;
  for (const ByteRange& r : ranges) total += r.length;
  return Judge(codec, level, total, [&](uint64_t at) { return ReadSample(ranges, at); });
}

Result<CompressibilityVerdict> JudgeCompressibilityOf(Codec codec, int level,
                                                      std::string_view data) {
  return Judge(codec, level, data.size(), [&](uint64_t at) -> Result<std::string> {
    return std::string(data.substr(at, kSampleBytes));
  });
}

}  // namespace cedana::image
