// zstd codec: zstd frames through the streaming API (ZSTD_compressStream2 and
// ZSTD_decompressStream), readable by the `zstd` command-line tool; frames already in memory
// decoded in one call (ZSTD_decompress).
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <string>

#include "image/codec_internal.h"

namespace cedana::image::internal {
namespace {

class ZstdCompressor : public storage::ByteSink {
 public:
  ZstdCompressor(std::unique_ptr<storage::ByteSink> out, int level)
      : out_(std::move(out)), cctx_(ZSTD_createCCtx()), buf_(kCodecBufferSize) {
    if (cctx_ == nullptr) {
      status_ = InternalError("zstd: cannot create compression context");
      return;
    }
    level = std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
    size_t rc = ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
    if (ZSTD_isError(rc)) status_ = InternalError(std::string("zstd: ") + ZSTD_getErrorName(rc));
  }
  ~ZstdCompressor() override { ZSTD_freeCCtx(cctx_); }

  Status Write(const void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (closed_) return status_ = FailedPreconditionError("zstd: write after Close");
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) {
      CEDANA_ASSIGN_OR_RETURN(size_t rc, Compress(&in, ZSTD_e_continue));
      (void)rc;
    }
    return OkStatus();
  }

  Status Close() override {
    if (!status_.ok()) return status_;
    if (closed_) return OkStatus();
    closed_ = true;
    ZSTD_inBuffer in{nullptr, 0, 0};
    for (;;) {
      CEDANA_ASSIGN_OR_RETURN(size_t remaining, Compress(&in, ZSTD_e_end));
      if (remaining == 0) break;
    }
    CEDANA_RETURN_IF_ERROR(FlushOut());
    return status_ = out_->Close();
  }

 private:
  // One compression step into buf_; writes buf_ downstream when it is full. Returns zstd's
  // "bytes left to flush" hint.
  Result<size_t> Compress(ZSTD_inBuffer* in, ZSTD_EndDirective mode) {
    ZSTD_outBuffer out{buf_.data(), buf_.size(), used_};
    size_t rc = ZSTD_compressStream2(cctx_, &out, in, mode);
    used_ = out.pos;
    if (ZSTD_isError(rc)) {
      return status_ = InternalError(std::string("zstd: ") + ZSTD_getErrorName(rc));
    }
    if (used_ == buf_.size()) {
      CEDANA_RETURN_IF_ERROR(FlushOut());
    }
    return rc;
  }
  Status FlushOut() {
    if (used_ == 0) return OkStatus();
    Status s = out_->Write(buf_.data(), used_);
    used_ = 0;
    if (!s.ok()) status_ = s;
    return s;
  }

  std::unique_ptr<storage::ByteSink> out_;
  ZSTD_CCtx* cctx_;
  std::vector<char> buf_;
  size_t used_ = 0;
  bool closed_ = false;
  Status status_;
};

// Reads concatenated zstd frames as one stream; input ending inside a frame is truncation.
class ZstdDecompressor : public storage::ByteSource {
 public:
  explicit ZstdDecompressor(std::unique_ptr<storage::ByteSource> in)
      : in_(std::move(in)), dctx_(ZSTD_createDCtx()) {
    if (dctx_ == nullptr) status_ = InternalError("zstd: cannot create decompression context");
  }
  ~ZstdDecompressor() override { ZSTD_freeDCtx(dctx_); }

  Result<size_t> Read(void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (size == 0) return size_t{0};
    for (;;) {
      if (Status s = in_.RefillIfEmpty(); !s.ok()) return status_ = s;
      ZSTD_inBuffer in{in_.data(), in_.size(), 0};
      ZSTD_outBuffer out{data, size, 0};
      // Called with no input too: the decoder may still hold output to flush.
      size_t rc = ZSTD_decompressStream(dctx_, &out, &in);
      if (ZSTD_isError(rc)) return status_ = CorruptError("zstd", ZSTD_getErrorName(rc));
      in_.Consume(in.pos);
      if (in.pos > 0 || out.pos > 0) in_frame_ = rc != 0;
      if (out.pos > 0) return out.pos;
      if (in_.eof()) {
        if (in_frame_) return status_ = CorruptError("zstd", "truncated frame");
        return size_t{0};
      }
    }
  }

 private:
  InputBuffer in_;
  ZSTD_DCtx* dctx_;
  bool in_frame_ = false;
  Status status_;
};

}  // namespace

Result<size_t> ZstdDecompressInto(std::string_view in, char* out, size_t capacity) {
  if (in.empty()) return size_t{0};  // as the source: no frame, no bytes
  size_t rc = ZSTD_decompress(out, capacity, in.data(), in.size());
  if (ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall) return capacity;
  if (ZSTD_isError(rc)) return CorruptError("zstd", ZSTD_getErrorName(rc));
  return rc;
}

std::unique_ptr<storage::ByteSink> ZstdSink(std::unique_ptr<storage::ByteSink> out, int level) {
  return std::make_unique<ZstdCompressor>(std::move(out), level);
}

std::unique_ptr<storage::ByteSource> ZstdSource(std::unique_ptr<storage::ByteSource> in) {
  return std::make_unique<ZstdDecompressor>(std::move(in));
}

}  // namespace cedana::image::internal
