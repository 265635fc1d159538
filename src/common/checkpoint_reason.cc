#include "common/checkpoint_reason.h"

#include <algorithm>

#include <fmt/format.h>

namespace cedana {

Status ValidateCheckpointReason(std::string_view reason) {
  if (std::find(kCheckpointReasons.begin(), kCheckpointReasons.end(), reason) !=
      kCheckpointReasons.end())
    return OkStatus();
  return InvalidArgumentError(fmt::format("unknown checkpoint reason \"{}\" (valid: {})", reason,
                                          fmt::join(kCheckpointReasons, ", ")));
}

std::string ReasonPhrase(std::string_view reason) {
  std::string phrase(reason);
  std::replace(phrase.begin(), phrase.end(), '_', ' ');
  return phrase;
}

}  // namespace cedana
