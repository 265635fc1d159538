#include "image/chunk_codec.h"

#include <fmt/format.h>

#include <algorithm>

#include "storage/byte_io.h"

namespace cedana::image {
namespace {

constexpr char kMagic[] = "cdc1";  // format 1

constexpr struct {
  Codec codec;
  char letter;
} kLetters[] = {{Codec::kNone, 'n'}, {Codec::kGzip, 'g'}, {Codec::kLz4, 'l'}, {Codec::kZstd, 'z'}};

char LetterOf(Codec codec) {
  for (const auto& l : kLetters)
    if (l.codec == codec) return l.letter;
  return 'n';
}

class AppendingSink : public storage::ByteSink {
 public:
  explicit AppendingSink(std::string* out) : out_(out) {}
  Status Write(const void* data, size_t size) override {
    out_->append(static_cast<const char*>(data), size);
    return OkStatus();
  }
  Status Close() override { return OkStatus(); }

 private:
  std::string* out_;
};

std::string Header(Codec codec) { return std::string(kMagic, 4) + LetterOf(codec); }

}  // namespace

size_t MaxStoredChunkBytes(uint64_t raw_bytes) { return kChunkHeaderBytes + raw_bytes; }

bool StoredRaw(std::string_view header) { return header == Header(Codec::kNone); }

Result<std::string> EncodeChunk(std::string_view raw, Codec codec, int level) {
  if (codec != Codec::kNone) {
    std::string out = Header(codec);
    auto sink = CompressingSink(codec, std::make_unique<AppendingSink>(&out), level);
    CEDANA_RETURN_IF_ERROR(sink->Write(raw.data(), raw.size()));
    CEDANA_RETURN_IF_ERROR(sink->Close());
    if (out.size() < MaxStoredChunkBytes(raw.size())) return out;
  }
  std::string out = Header(Codec::kNone);
  out.append(raw);
  return out;
}

Result<std::string_view> DecodeChunk(std::string_view stored, uint64_t raw_bytes,
                                     std::string* decoded) {
  if (stored.size() < kChunkHeaderBytes || stored.substr(0, 4) != std::string_view(kMagic, 4))
    return AbortedError("not a stored chunk (its header is missing or unknown)");
  const char letter = stored[4];
  stored.remove_prefix(kChunkHeaderBytes);
  const auto* known = std::find_if(std::begin(kLetters), std::end(kLetters),
                                   [letter](const auto& l) { return l.letter == letter; });
  if (known == std::end(kLetters))
    return AbortedError(fmt::format("stored chunk names an unknown codec '{}'", letter));
  if (known->codec == Codec::kNone) {
    if (stored.size() > raw_bytes)
      return AbortedError("stored chunk is longer than its index says");
    return stored;
  }
  // One byte more: a chunk that decodes longer is refused. The buffer only grows: sized down and
  // up again for every chunk, a string zeroes what it grows by.
  std::string& out = *decoded;
  if (out.size() < raw_bytes + 1) out.resize(raw_bytes + 1);
  CEDANA_ASSIGN_OR_RETURN(size_t got,
                          DecompressInto(known->codec, stored, out.data(), raw_bytes + 1));
  if (got > raw_bytes) return AbortedError("stored chunk decodes longer than its index says");
  return std::string_view(out.data(), got);
}

}  // namespace cedana::image
