// gzip codec. Compression: libdeflate (several times faster than zlib at the same level)
// writing one gzip member per 2 MiB of input; concatenated members are one valid gzip file,
// so `gzip -d` still reads a stream whole. Decompression: zlib's streaming inflate across
// members.
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <string>

#include "image/codec_internal.h"

namespace cedana::image::internal {
namespace {

constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip header and trailer
// Input per member: large enough that the per-member restart costs well under 1% of ratio,
// small enough to keep a stream's buffers at a few MiB.
constexpr size_t kMemberInputBytes = size_t{2} << 20;

class GzipCompressor : public storage::ByteSink {
 public:
  GzipCompressor(std::unique_ptr<storage::ByteSink> out, int level)
      : out_(std::move(out)), compressor_(libdeflate_alloc_compressor(std::clamp(level, 0, 12))) {
    if (compressor_ == nullptr) {
      status_ = InternalError("gzip: libdeflate_alloc_compressor failed");
      return;
    }
    in_.reserve(kMemberInputBytes);
    member_.resize(libdeflate_gzip_compress_bound(compressor_, kMemberInputBytes));
  }
  ~GzipCompressor() override {
    if (compressor_ != nullptr) libdeflate_free_compressor(compressor_);
  }

  Status Write(const void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (closed_) return status_ = FailedPreconditionError("gzip: write after Close");
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      size_t n = std::min(size, kMemberInputBytes - in_.size());
      in_.append(p, n);
      p += n;
      size -= n;
      if (in_.size() == kMemberInputBytes) CEDANA_RETURN_IF_ERROR(WriteMember());
    }
    return OkStatus();
  }

  Status Close() override {
    if (!status_.ok()) return status_;
    if (closed_) return OkStatus();
    closed_ = true;
    // An empty stream is still one (empty) member: a gzip file is never zero bytes.
    if (!in_.empty() || !wrote_member_) CEDANA_RETURN_IF_ERROR(WriteMember());
    return status_ = out_->Close();
  }

 private:
  Status WriteMember() {
    size_t n = libdeflate_gzip_compress(compressor_, in_.data(), in_.size(), member_.data(),
                                        member_.size());
    if (n == 0) return status_ = InternalError("gzip: libdeflate_gzip_compress found no room");
    in_.clear();
    wrote_member_ = true;
    if (Status s = out_->Write(member_.data(), n); !s.ok()) return status_ = s;
    return OkStatus();
  }

  std::unique_ptr<storage::ByteSink> out_;
  libdeflate_compressor* compressor_;
  std::string in_;
  std::vector<char> member_;
  bool wrote_member_ = false;
  bool closed_ = false;
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
