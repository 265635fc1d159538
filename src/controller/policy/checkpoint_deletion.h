// Deleting checkpoints the controller knows: from the checkpoint storage first, which is the
// source of truth, then from the catalog's index; a storage that refuses leaves both as they
// were. Used by the API's DELETE and by a policy's retention, so both delete alike.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

// `store_dir` (checkpoint.dir) with `s3` for an s3:// one.
Status DeleteCheckpoint(const std::string& store_dir, const S3Config& s3, CheckpointIndex& index,
                        const CheckpointRecord& c);

// A finished policy dump `made`: tags it with its policy, then deletes the policy's checkpoints
// of that label past its max_checkpoints (PolicyCheckpointsToDelete), each logged. Returns the
// first error; a checkpoint that could not be deleted stays in the index for the next pass.
Status ApplyPolicyRetention(const std::string& store_dir, const S3Config& s3, Catalog& catalog,
                            const PolicyRecord& policy, const CheckpointRecord& made);

}  // namespace cedana::controller
