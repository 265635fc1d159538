// Codec: how a checkpoint's streams are compressed, by name. Here rather than in src/image
// because the config, manifests and the daemon's requests name it too; the codecs themselves
// are image/codec.h.
#pragma once

#include <string_view>

#include "common/named_values.h"
#include "common/result.h"

namespace cedana {

enum class Codec { kNone, kGzip, kLz4, kZstd };

inline constexpr NamedValue<Codec> kCodecNames[] = {
    {"none", Codec::kNone}, {"gzip", Codec::kGzip}, {"lz4", Codec::kLz4}, {"zstd", Codec::kZstd}};

// kInvalidArgument names the bad value and the valid ones.
Result<Codec> ParseCodec(std::string_view name);
std::string_view CodecName(Codec codec);

}  // namespace cedana
