#include "controller/watch/checkpoint_indexer.h"

#include <set>

#include "common/log.h"
#include "image/lineage.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::controller {

CheckpointIndexer::CheckpointIndexer(const Config& config, Catalog& catalog, std::string cluster_key)
    : config_(config), catalog_(catalog), cluster_key_(std::move(cluster_key)) {}

// Why a manifest read from storage is not indexed ("" when it is): storage may be writable by
// users, so only what the cluster key signed counts, and it must sit at its own path.
std::string CheckpointIndexer::Refusal(const storage::CheckpointRef& ref, const image::Manifest& m) const {
  if (cluster_key_.empty()) return "the controller has no cluster key to verify it with";
  if (Status v = image::VerifyManifest(m, cluster_key_); !v.ok()) return v.message();
  if (m.owner != ref.owner || m.label != ref.label || m.id != ref.id)
    return "its signed owner, label and id (" + m.owner + "/" + m.label + "/" + m.id +
           ") are not its path's";
  return "";
}

// A label's lineage may end at any time (its run exited by itself on some node): each refresh
// reads the record of every label it indexes, once.
void CheckpointIndexer::MarkFinishedRuns(storage::CheckpointStore& store,
                                         std::vector<CheckpointRecord>* found) const {
  image::LineageEnds ends(store);
  for (CheckpointRecord& c : *found)
    c.run = image::OfFinishedRun(c.created_ms, ends.OrOpen(c.owner, c.label, "index")) ? "finished" : "open";
}

Status CheckpointIndexer::Refresh() {
  CEDANA_ASSIGN_OR_RETURN(auto store, storage::OpenStore(config_.checkpoint_dir, config_));
  CEDANA_ASSIGN_OR_RETURN(auto refs, store->List(std::nullopt, std::nullopt));
  std::vector<CheckpointRecord> found;
  std::map<std::string, CheckpointRecord> now;
  std::set<std::string> refused;
  for (const auto& ref : refs) {
    const std::string path = ref.Path();
    if (auto it = known_.find(path); it != known_.end()) {
      now[path] = it->second;
      found.push_back(it->second);
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
    std::string why = m.has_value() ? Refusal(ref, *m) : "malformed manifest: " + m.error().message();
    if (!why.empty()) {
      log::Warn("index: checkpoint {} not indexed: {}", path, why);
      refused.insert(path);
      continue;
    }
    // Everything below is the signed content's, not the path's.
    CheckpointRecord c;
    c.id = m->id;
    c.owner = m->owner;
    c.label = m->label;
    if (!m->job_id.empty()) {
      try {
        c.job_id = std::stoll(m->job_id);
      } catch (const std::exception&) {
      }
    }
    c.node = m->node;
    c.created_ms = m->created_at_ms;
    c.size = static_cast<int64_t>(m->StoredBytes());
    c.image_size = static_cast<int64_t>(m->images_bytes);
    c.codec = std::string(image::CodecName(m->codec));
    c.streams = static_cast<int64_t>(m->streams.size());
    c.state = "good";
    c.location = store->Describe() + "/" + path;
    c.reason = m->reason;
    c.restart_count = m->restart_count;
    c.frozen_ms = m->frozen_ms;
    c.duration_ms = m->duration_ms;
    c.manifest = *text;
    now[path] = c;
    found.push_back(std::move(c));
  }
  MarkFinishedRuns(*store, &found);
  CEDANA_RETURN_IF_ERROR(catalog_.SyncCheckpoints(found));
  known_ = std::move(now);
  refused_ = std::move(refused);
  return OkStatus();
}

}  // namespace cedana::controller
