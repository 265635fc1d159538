#include "common/label.h"

#include <cctype>

#include <fmt/format.h>

namespace cedana {

Status ValidateLabel(const std::string& label) {
  auto bad = [&] {
    return InvalidArgumentError(fmt::format(
        "invalid label \"{}\": a label is 1 to 128 letters, digits, '.', '_' or '-', and does "
        "not start with '.' or '-'",
        label));
  };
  if (label.empty() || label.size() > 128 || label[0] == '.' || label[0] == '-') return bad();
  for (char c : label)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return bad();
  return OkStatus();
}

}  // namespace cedana
