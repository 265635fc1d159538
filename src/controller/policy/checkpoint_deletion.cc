#include "controller/policy/checkpoint_deletion.h"

#include "common/log.h"
#include "controller/policy/scheduler.h"
#include "image/chunk_sweep.h"
#include "storage/checkpoint_store.h"

namespace cedana::controller {
namespace {

Status DeleteFrom(storage::CheckpointStore& store, CheckpointIndex& index,
                  const storage::CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(image::RemoveCheckpoint(store, ref))
      << "deleting checkpoint " << ref.id << " from " << store.Describe();
  return index.Delete(ref.id);
}

}  // namespace

Status DeleteCheckpoint(const std::string& store_dir, const S3Config& s3, CheckpointIndex& index,
                        const CheckpointRecord& c) {
  CEDANA_ASSIGN_OR_RETURN(auto store, storage::OpenStore(store_dir, s3, storage::kNoStreamMemory));
  return DeleteFrom(*store, index, {c.owner, c.label, c.id});
}

Status ApplyPolicyRetention(const std::string& store_dir, const S3Config& s3, Catalog& catalog,
                            const PolicyRecord& policy, const CheckpointRecord& made) {
  CEDANA_ASSIGN_OR_RETURN(std::vector<CheckpointRecord> of_label,
                          catalog.checkpoints().List({made.owner, made.label, std::nullopt}));
  std::vector<std::string> doomed = PolicyCheckpointsToDelete(policy, of_label);
  if (doomed.empty()) return OkStatus();
  CEDANA_ASSIGN_OR_RETURN(auto store, storage::OpenStore(store_dir, s3, storage::kNoStreamMemory));
  Status first = OkStatus();
  for (const std::string& id : doomed) {  // all of made's owner and label
    Status s = DeleteFrom(*store, catalog.checkpoints(), {made.owner, made.label, id});
    if (s.ok())
      log::Info("policy: \"{}\" deleted checkpoint {} (keeping {} of label {})", policy.name, id,
                *policy.max_checkpoints, made.label);
    else if (first.ok()) first = s;
  }
  return first;
}

}  // namespace cedana::controller
