// Naming, validation and the log note shared by every CheckpointStore.
#include <string>

#include "storage/checkpoint_store.h"

namespace cedana::storage {

std::string StreamMemoryNote(const CheckpointStore& store) {
  if (store.StreamMemoryLimit() == 0) return "";
  return ", stream buffers peak " + std::to_string(store.StreamMemoryPeak() >> 20) + " of " +
         std::to_string(store.StreamMemoryLimit() >> 20) + " MiB";
}

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
  // Names with a leading dot beside the checkpoints are the store's own (kChunksDirName).
  if (ref.id[0] == '.')
    return InvalidArgumentError("checkpoint id \"" + ref.id + "\" may not begin with '.'");
  return OkStatus();
}

bool IsChunkDigest(std::string_view name) {
  return name.size() == 64 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

Status ValidateChunk(const ChunkRef& chunk) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", chunk.owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", chunk.label));
  if (!IsChunkDigest(chunk.digest))
    return InvalidArgumentError("chunk name \"" + chunk.digest +
                                "\" is not a SHA-256 (64 lowercase hex digits)");
  return OkStatus();
}

std::string StreamName(int index) { return "stream-" + std::to_string(index); }

}  // namespace cedana::storage
