#include "image/chunk_sweep.h"

#include <set>

#include "common/log.h"
#include "image/chunk_index.h"

namespace cedana::image {

Result<SweepResult> SweepChunks(storage::CheckpointStore& store, const std::string& owner,
                                const std::string& label) {
  SweepResult result;
  CEDANA_ASSIGN_OR_RETURN(auto chunks, store.ListChunks(owner, label));
  if (chunks.empty()) return result;
  // Listed after the chunks: a checkpoint begun after the listing names only chunks listed, or
  // chunks stored after it (kept: not in the list).
  CEDANA_ASSIGN_OR_RETURN(auto refs, store.List(owner, label));
  const size_t committed = refs.size();
  CEDANA_ASSIGN_OR_RETURN(auto uncommitted, store.ListUncommitted());
  for (auto& r : uncommitted)
    if (r.owner == owner && r.label == label) refs.push_back(std::move(r));

  std::set<std::string> named;
  for (size_t i = 0; i < refs.size(); ++i) {
    auto json = store.ReadFile(refs[i], kChunkIndexName, storage::kMaxCheckpointFileBytes);
    if (!json.has_value() && json.error().code() == Code::kNotFound) {
      if (i < committed) continue;  // not deduplicated: it names no chunk
      log::Info("storage: keeping the chunks of label {}: checkpoint {} is being stored", label,
                refs[i].id);
      result.deferred = true;
      result.kept = chunks.size();
      return result;
    }
    if (!json.has_value()) return std::move(json).error();
    auto index = ParseChunkIndex(*json);
    if (!index.has_value())
      return std::move(index).error().WithContext("checkpoint " + refs[i].Path());
    for (const std::string& d : index->Digests()) named.insert(d);
  }
  for (const std::string& digest : chunks) {
    if (named.count(digest)) {
      ++result.kept;
      continue;
    }
    CEDANA_RETURN_IF_ERROR(store.DeleteChunk({owner, label, digest}));
    ++result.removed;
  }
  return result;
}

Status RemoveCheckpoint(storage::CheckpointStore& store, const storage::CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(store.Delete(ref));
  auto swept = SweepChunks(store, ref.owner, ref.label);
  if (!swept.has_value())
    log::Warn("storage: chunks of label {} not swept after deleting {}: {}", ref.label, ref.id,
              swept.error().ToString());
  else if (swept->removed > 0)
    log::Info("storage: removed {} chunks of label {} no checkpoint names any more ({} kept)",
              swept->removed, ref.label, swept->kept);
  return OkStatus();
}

}  // namespace cedana::image
