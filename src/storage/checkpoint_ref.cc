// Naming and validation shared by every CheckpointStore.
#include <string>

#include "storage/checkpoint_store.h"

namespace cedana::storage {

Status ValidateComponent(std::string_view what, const std::string& value) {
  if (value.empty()) return InvalidArgumentError(std::string(what) + " is empty");
  if (value == "." || value == ".." || value.find('/') != std::string::npos ||
      value.find('\0') != std::string::npos) {
    return InvalidArgumentError(std::string(what) + " \"" + value +
                                "\" is not a valid path component");
  }
  return OkStatus();
}

Status ValidateRef(const CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", ref.owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", ref.label));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("checkpoint id", ref.id));
  return OkStatus();
}

std::string StreamName(int index) { return "stream-" + std::to_string(index); }

}  // namespace cedana::storage
