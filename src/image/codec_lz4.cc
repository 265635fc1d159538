// lz4 codec: the lz4 frame format (LZ4F_*), readable by the `lz4` command-line tool.
#include <lz4frame.h>

#include <algorithm>
#include <string>

#include "image/codec.h"
#include "image/codec_internal.h"

namespace cedana::image::internal {
namespace {

// Input is fed to LZ4F in pieces of this size so the output bound stays fixed.
constexpr size_t kLz4Chunk = kCodecBufferSize;

LZ4F_preferences_t Lz4Preferences(int level) {
  LZ4F_preferences_t prefs{};
  // 1 MiB independent blocks: fewer block headers than the 64 KiB default, and no dependency
  // between blocks to slow the decoder.
  prefs.frameInfo.blockSizeID = LZ4F_max1MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  // Negative: the fast mode, acceleration -level (CodecLevel).
  prefs.compressionLevel = std::clamp(level, -kMaxLz4Acceleration, 12);
  return prefs;
}

class Lz4Compressor : public storage::ByteSink {
 public:
  Lz4Compressor(std::unique_ptr<storage::ByteSink> out, int level)
      : out_(std::move(out)), prefs_(Lz4Preferences(level)) {
    bound_ = LZ4F_compressBound(kLz4Chunk, &prefs_) + LZ4F_HEADER_SIZE_MAX;
    buf_.resize(kCodecBufferSize + bound_);
    if (LZ4F_isError(LZ4F_createCompressionContext(&cctx_, LZ4F_VERSION))) {
      cctx_ = nullptr;
      status_ = InternalError("lz4: cannot create compression context");
    }
  }
  ~Lz4Compressor() override { LZ4F_freeCompressionContext(cctx_); }

  Status Write(const void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (closed_) return status_ = FailedPreconditionError("lz4: write after Close");
    CEDANA_RETURN_IF_ERROR(BeginIfNeeded());
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      size_t chunk = std::min(size, kLz4Chunk);
      CEDANA_RETURN_IF_ERROR(MakeRoom());
      size_t n =
          LZ4F_compressUpdate(cctx_, buf_.data() + used_, buf_.size() - used_, p, chunk, nullptr);
      CEDANA_RETURN_IF_ERROR(Check(n, "compressUpdate"));
      used_ += n;
      p += chunk;
      size -= chunk;
    }
    return OkStatus();
  }

  Status Close() override {
    if (!status_.ok()) return status_;
    if (closed_) return OkStatus();
    closed_ = true;
    CEDANA_RETURN_IF_ERROR(BeginIfNeeded());
    CEDANA_RETURN_IF_ERROR(MakeRoom());
    size_t n = LZ4F_compressEnd(cctx_, buf_.data() + used_, buf_.size() - used_, nullptr);
    CEDANA_RETURN_IF_ERROR(Check(n, "compressEnd"));
    used_ += n;
    CEDANA_RETURN_IF_ERROR(FlushOut());
    return status_ = out_->Close();
  }

 private:
  Status BeginIfNeeded() {
    if (begun_) return OkStatus();
    begun_ = true;
    size_t n = LZ4F_compressBegin(cctx_, buf_.data(), buf_.size(), &prefs_);
    CEDANA_RETURN_IF_ERROR(Check(n, "compressBegin"));
    used_ = n;
    return OkStatus();
  }
  // Ensures the worst-case output of one chunk fits after what is buffered.
  Status MakeRoom() {
    if (buf_.size() - used_ >= bound_) return OkStatus();
    return FlushOut();
  }
  Status FlushOut() {
    if (used_ == 0) return OkStatus();
    Status s = out_->Write(buf_.data(), used_);
    used_ = 0;
    if (!s.ok()) status_ = s;
    return s;
  }
  Status Check(size_t rc, const char* what) {
    if (!LZ4F_isError(rc)) return OkStatus();
    return status_ = InternalError(std::string("lz4: ") + what + ": " + LZ4F_getErrorName(rc));
  }

  std::unique_ptr<storage::ByteSink> out_;
  LZ4F_preferences_t prefs_;
  LZ4F_cctx* cctx_ = nullptr;
  std::vector<char> buf_;
  size_t bound_ = 0;
  size_t used_ = 0;
  bool begun_ = false;
  bool closed_ = false;
  Status status_;
};

// Reads concatenated lz4 frames as one stream; input ending inside a frame is truncation.
class Lz4Decompressor : public storage::ByteSource {
 public:
  explicit Lz4Decompressor(std::unique_ptr<storage::ByteSource> in) : in_(std::move(in)) {
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx_, LZ4F_VERSION))) {
      dctx_ = nullptr;
      status_ = InternalError("lz4: cannot create decompression context");
    }
  }
  ~Lz4Decompressor() override { LZ4F_freeDecompressionContext(dctx_); }

  Result<size_t> Read(void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (size == 0) return size_t{0};
    for (;;) {
      if (Status s = in_.RefillIfEmpty(); !s.ok()) return status_ = s;
      size_t src = in_.size();
      size_t dst = size;
      // Called with no input too: the decoder may still hold output from an earlier block.
      size_t rc = LZ4F_decompress(dctx_, data, &dst, in_.data(), &src, nullptr);
      if (LZ4F_isError(rc)) return status_ = CorruptError("lz4", LZ4F_getErrorName(rc));
      in_.Consume(src);
      if (src > 0 || dst > 0) in_frame_ = rc != 0;
      if (dst > 0) return dst;
      if (in_.eof()) {
        if (in_frame_) return status_ = CorruptError("lz4", "truncated frame");
        return size_t{0};
      }
    }
  }

 private:
  InputBuffer in_;
  LZ4F_dctx* dctx_ = nullptr;
  bool in_frame_ = false;
  Status status_;
};

}  // namespace

Result<size_t> Lz4DecompressInto(std::string_view in, char* out, size_t capacity) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
    return InternalError("lz4: cannot create decompression context");
  std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> owned(
      dctx, LZ4F_freeDecompressionContext);
  size_t got = 0;
  bool in_frame = false;
  while (!in.empty() && got < capacity) {
    size_t dst = capacity - got;
    size_t src = in.size();
    size_t rc = LZ4F_decompress(dctx, out + got, &dst, in.data(), &src, nullptr);
    if (LZ4F_isError(rc)) return CorruptError("lz4", LZ4F_getErrorName(rc));
    got += dst;
    in.remove_prefix(src);
    in_frame = rc != 0;
    if (src == 0 && dst == 0) break;  // no progress: the frame cannot go on
  }
  if (got == capacity) return got;
  if (in_frame) return CorruptError("lz4", "truncated frame");
  return got;
}

std::unique_ptr<storage::ByteSink> Lz4Sink(std::unique_ptr<storage::ByteSink> out, int level) {
  return std::make_unique<Lz4Compressor>(std::move(out), level);
}

std::unique_ptr<storage::ByteSource> Lz4Source(std::unique_ptr<storage::ByteSource> in) {
  return std::make_unique<Lz4Decompressor>(std::move(in));
}

}  // namespace cedana::image::internal
