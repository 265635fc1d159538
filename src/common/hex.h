// Lowercase hex encoding of bytes (digests, tokens, keys, files kept in JSON) and its inverse.
// Stateless.
#pragma once

#include <string>
#include <string_view>

namespace cedana {

std::string HexEncode(std::string_view bytes);
// Decodes lowercase or uppercase hex; a trailing odd digit or a non-hex character ends it.
std::string HexDecode(std::string_view hex);

}  // namespace cedana
