#include "controller/watch/checkpoint_indexer.h"

#include <chrono>
#include <set>

#include "common/log.h"
#include "image/lineage.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::controller {

CheckpointIndexer::CheckpointIndexer(const Config& config, Catalog& catalog,
                                     std::string cluster_key)
    : config_(config), catalog_(catalog), cluster_key_(std::move(cluster_key)) {}

// Why a manifest read from storage is not indexed ("" when it is): storage may be writable by
// users, so only what the cluster key signed counts, and it must sit at its own path.
std::string CheckpointIndexer::Refusal(const storage::CheckpointRef& ref,
                                       const image::Manifest& m) const {
  if (cluster_key_.empty()) return "the controller has no cluster key to verify it with";
  if (Status v = image::VerifyManifest(m, cluster_key_); !v.ok()) return v.message();
  if (m.owner != ref.owner || m.label != ref.label || m.id != ref.id)
    return "its signed owner, label and id (" + m.owner + "/" + m.label + "/" + m.id +
           ") are not its path's";
  return "";
}

// A label's lineage may end at any time (its run exited by itself on some node). A checkpoint
// of a finished run stays of a finished run (a lineage's end only moves forward), so only the
// labels with checkpoints of an open run have their record read, once per refresh.
void CheckpointIndexer::MarkFinishedRuns(storage::CheckpointStore& store,
                                         std::vector<CheckpointRecord>* found) const {
  image::LineageEnds ends(store);
  for (CheckpointRecord& c : *found) {
    if (c.run == "finished") continue;
    c.run = image::OfFinishedRun(c.created_ms, ends.OrOpen(c.owner, c.label, "index")) ? "finished"
                                                                                       : "open";
  }
}

namespace {

// What a manifest that Refusal accepted says, as the index keeps it: everything from the
// signed content, nothing from the path.
CheckpointRecord RecordOf(const image::Manifest& m, const std::string& text,
                          const std::string& location) {
  CheckpointRecord c;
  c.id = m.id;
  c.owner = m.owner;
  c.label = m.label;
  if (!m.job_id.empty()) {
    try {
      c.job_id = std::stoll(m.job_id);
    } catch (const std::exception&) {
    }
  }
  c.node = m.node;
  c.created_ms = m.created_at_ms;
  c.size = static_cast<int64_t>(m.StoredBytes());
  c.image_size = static_cast<int64_t>(m.images_bytes);
  c.codec = std::string(CodecName(m.codec));
  c.streams = static_cast<int64_t>(m.streams.size());
  c.state = "good";
  c.location = location;
  c.reason = m.reason;
  c.restart_count = m.restart_count;
  c.frozen_ms = m.frozen_ms;
  c.duration_ms = m.duration_ms;
  c.manifest = text;
  return c;
}

}  // namespace

Status CheckpointIndexer::Refresh() {
  CEDANA_ASSIGN_OR_RETURN(
      auto store, storage::OpenStore(config_.checkpoint_dir, config_.s3, storage::kNoStreamMemory));
  CEDANA_ASSIGN_OR_RETURN(auto refs, store->List(std::nullopt, std::nullopt));
  std::vector<CheckpointRecord> found;
  std::vector<std::string> paths;  // found[i]'s
  std::set<std::string> refused;
  for (const auto& ref : refs) {
    const std::string path = ref.Path();
    if (auto it = known_.find(path); it != known_.end()) {
      found.push_back(it->second);
      paths.push_back(path);
      continue;
    }
    if (refused_.count(path) != 0) {
      refused.insert(path);
      continue;
    }
    Result<std::string> text = store->ReadManifest(ref);
    if (!text.has_value()) {
      if (text.error().code() != Code::kNotFound) {  // not deleted while listing: refused
        log::Warn("index: checkpoint {} not indexed: {}", path, text.error().ToString());
        refused.insert(path);
      }
      continue;
    }
    Result<image::Manifest> m = image::ParseManifest(*text);
    std::string why =
        m.has_value() ? Refusal(ref, *m) : "malformed manifest: " + m.error().message();
    if (!why.empty()) {
      log::Warn("index: checkpoint {} not indexed: {}", path, why);
      refused.insert(path);
      continue;
    }
    found.push_back(RecordOf(*m, *text, store->Describe() + "/" + path));
    paths.push_back(path);
  }
  MarkFinishedRuns(*store, &found);

  // Only what changed is written; the whole index again every few minutes, which also sets
  // right what anything else changed in it.
  std::map<std::string, CheckpointRecord> now;
  std::vector<CheckpointRecord> changed;
  for (size_t i = 0; i < found.size(); ++i) {
    auto before = known_.find(paths[i]);
    if (before == known_.end() || before->second.run != found[i].run) changed.push_back(found[i]);
    now[paths[i]] = found[i];
  }
  std::vector<std::string> removed;
  for (const auto& [path, c] : known_)
    if (now.count(path) == 0) removed.push_back(c.id);
  const auto at = std::chrono::steady_clock::now();
  const bool full = !synced_once_ || at - last_full_ >= kFullEvery;
  CEDANA_RETURN_IF_ERROR(full ? catalog_.checkpoints().Sync(found)
                              : catalog_.checkpoints().Update(changed, removed));
  if (full) last_full_ = at;
  synced_once_ = true;
  known_ = std::move(now);
  refused_ = std::move(refused);
  return OkStatus();
}

}  // namespace cedana::controller
