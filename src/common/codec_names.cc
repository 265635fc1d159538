#include "common/codec_names.h"

#include <fmt/format.h>

namespace cedana {

Result<Codec> ParseCodec(std::string_view name) {
  if (std::optional<Codec> codec = ValueNamed(kCodecNames, name)) return *codec;
  return InvalidArgumentError(
      fmt::format("unknown compression \"{}\" (valid: {})", name, ValueNames(kCodecNames)));
}

std::string_view CodecName(Codec codec) { return NameOf(kCodecNames, codec); }

}  // namespace cedana
