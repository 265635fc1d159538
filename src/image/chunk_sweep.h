// Chunk references: a label's chunks are shared by its deduplicated checkpoints, and one is
// removed only when no checkpoint of the label names it any more. The count is taken from the
// store itself, every checkpoint's chunk index, committed or not, so it is right after any crash
// and across nodes (docs/storage.md, *Deduplicated checkpoints*). Every deletion of a checkpoint
// goes through RemoveCheckpoint. Thread-safe functions, as far as the store is.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

struct SweepResult {
  uint64_t removed = 0;   // chunks deleted
  uint64_t kept = 0;      // chunks still named by a checkpoint
  bool deferred = false;  // a dump of the label was in progress: nothing was deleted
};

// Deletes the chunks of owner/label that no checkpoint's chunk index names. While a checkpoint
// of the label has no index and no manifest (a dump storing its chunks), nothing is deleted:
// the sweep that follows the next deletion does it. An index that cannot be read stops the
// sweep with its error (a chunk it names might be deleted otherwise).
Result<SweepResult> SweepChunks(storage::CheckpointStore& store, const std::string& owner,
                                const std::string& label);

// Deletes `ref` (CheckpointStore::Delete), then sweeps its label's chunks. A failed sweep is
// logged, not returned: the checkpoint is gone, and its chunks go with a later sweep.
Status RemoveCheckpoint(storage::CheckpointStore& store, const storage::CheckpointRef& ref);

}  // namespace cedana::image
