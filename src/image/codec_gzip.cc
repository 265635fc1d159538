// gzip codec: zlib deflate/inflate with the gzip wrapper (windowBits 15 + 16), so a stream is a
// standard gzip member that `gzip -d` reads.
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <string>

#include "image/codec_internal.h"

namespace cedana::image::internal {
namespace {

constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip header and trailer

class GzipCompressor : public storage::ByteSink {
 public:
  GzipCompressor(std::unique_ptr<storage::ByteSink> out, int level)
      : out_(std::move(out)), buf_(kCodecBufferSize) {
    level = std::clamp(level, 0, 9);
    if (deflateInit2(&zs_, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      status_ = InternalError("gzip: deflateInit2 failed");
    } else {
      initialized_ = true;
    }
  }
  ~GzipCompressor() override {
    if (initialized_) deflateEnd(&zs_);
  }

  Status Write(const void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (closed_) return status_ = FailedPreconditionError("gzip: write after Close");
    const Bytef* p = static_cast<const Bytef*>(data);
    while (size > 0) {
      // avail_in is 32-bit.
      uInt chunk = static_cast<uInt>(std::min<size_t>(size, UINT_MAX));
      zs_.next_in = const_cast<Bytef*>(p);
      zs_.avail_in = chunk;
      while (zs_.avail_in > 0) CEDANA_RETURN_IF_ERROR(Deflate(Z_NO_FLUSH));
      p += chunk;
      size -= chunk;
    }
    return OkStatus();
  }

  Status Close() override {
    if (!status_.ok()) return status_;
    if (closed_) return OkStatus();
    closed_ = true;
    zs_.avail_in = 0;
    bool done = false;
    while (!done) {
      CEDANA_ASSIGN_OR_RETURN(done, DeflateFinish());
    }
    CEDANA_RETURN_IF_ERROR(FlushOut());
    return status_ = out_->Close();
  }

 private:
  // Runs deflate into the free part of buf_, writing buf_ downstream when it is full.
  Status Deflate(int flush) {
    size_t used = used_;
    zs_.next_out = reinterpret_cast<Bytef*>(buf_.data() + used);
    zs_.avail_out = static_cast<uInt>(buf_.size() - used);
    int rc = deflate(&zs_, flush);
    used_ = buf_.size() - zs_.avail_out;
    if (rc == Z_STREAM_ERROR) return status_ = InternalError("gzip: deflate stream error");
    last_rc_ = rc;
    if (used_ == buf_.size()) return FlushOut();
    return OkStatus();
  }
  Result<bool> DeflateFinish() {
    CEDANA_RETURN_IF_ERROR(Deflate(Z_FINISH));
    return last_rc_ == Z_STREAM_END;
  }
  Status FlushOut() {
    if (used_ == 0) return OkStatus();
    Status s = out_->Write(buf_.data(), used_);
    used_ = 0;
    if (!s.ok()) status_ = s;
    return s;
  }

  std::unique_ptr<storage::ByteSink> out_;
  std::vector<char> buf_;
  size_t used_ = 0;
  z_stream zs_{};
  bool initialized_ = false;
  bool closed_ = false;
  int last_rc_ = Z_OK;
  Status status_;
};

// Reads concatenated gzip members as one stream (what `gzip -d` does). Input ending inside a
// member is truncation; bytes after a member that are not another member are corruption.
class GzipDecompressor : public storage::ByteSource {
 public:
  explicit GzipDecompressor(std::unique_ptr<storage::ByteSource> in) : in_(std::move(in)) {
    if (inflateInit2(&zs_, kGzipWindowBits) != Z_OK) {
      status_ = InternalError("gzip: inflateInit2 failed");
    } else {
      initialized_ = true;
    }
  }
  ~GzipDecompressor() override {
    if (initialized_) inflateEnd(&zs_);
  }

  Result<size_t> Read(void* data, size_t size) override {
    if (!status_.ok()) return status_;
    size = std::min<size_t>(size, UINT_MAX);
    if (size == 0) return size_t{0};
    for (;;) {
      if (Status s = in_.RefillIfEmpty(); !s.ok()) return status_ = s;
      if (in_.eof()) {
        if (in_member_) return status_ = CorruptError("gzip", "truncated member");
        if (!seen_member_) return status_ = CorruptError("gzip", "empty stream");
        return size_t{0};
      }
      if (!in_member_) {
        // A new member follows the previous one.
        if (seen_member_) inflateReset(&zs_);
        in_member_ = seen_member_ = true;
      }
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data()));
      zs_.avail_in = static_cast<uInt>(in_.size());
      zs_.next_out = static_cast<Bytef*>(data);
      zs_.avail_out = static_cast<uInt>(size);
      int rc = inflate(&zs_, Z_NO_FLUSH);
      in_.Consume(in_.size() - zs_.avail_in);
      size_t produced = size - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        in_member_ = false;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return status_ = CorruptError("gzip", zs_.msg != nullptr ? zs_.msg : "inflate failed");
      }
      if (produced > 0) return produced;
    }
  }

 private:
  InputBuffer in_;
  z_stream zs_{};
  bool initialized_ = false;
  bool in_member_ = false;
  bool seen_member_ = false;
  Status status_;
};

}  // namespace

std::unique_ptr<storage::ByteSink> GzipSink(std::unique_ptr<storage::ByteSink> out, int level) {
  return std::make_unique<GzipCompressor>(std::move(out), level);
}

std::unique_ptr<storage::ByteSource> GzipSource(std::unique_ptr<storage::ByteSource> in) {
  return std::make_unique<GzipDecompressor>(std::move(in));
}

}  // namespace cedana::image::internal
