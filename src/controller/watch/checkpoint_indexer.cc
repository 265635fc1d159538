#include "controller/watch/checkpoint_indexer.h"

#include "common/log.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::controller {

CheckpointIndexer::CheckpointIndexer(const Config& config, Catalog& catalog, std::string cluster_key)
    : config_(config), catalog_(catalog), cluster_key_(std::move(cluster_key)) {}

Status CheckpointIndexer::Refresh() {
  CEDANA_ASSIGN_OR_RETURN(auto store, storage::OpenStore(config_.checkpoint_dir, config_));
  CEDANA_ASSIGN_OR_RETURN(auto refs, store->List(std::nullopt, std::nullopt));
  std::vector<CheckpointRecord> found;
  std::map<std::string, CheckpointRecord> now;
  for (const auto& ref : refs) {
    auto it = known_.find(ref.id);
    if (it != known_.end()) {
      now[ref.id] = it->second;
      found.push_back(it->second);
      continue;
    }
    Result<std::string> text = store->ReadManifest(ref);
    if (!text.has_value()) continue;  // deleted while listing
    Result<image::Manifest> m = image::ParseManifest(*text);
    if (!m.has_value()) {
      log::Warn("index: checkpoint {} has a malformed manifest: {}", ref.Path(), m.error().ToString());
      continue;
    }
    CheckpointRecord c;
    c.id = m->id;
    c.owner = m->owner;  // signed; the store path is only layout
    c.label = ref.label;
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
    c.state = cluster_key_.empty() ? "unverified"
              : image::VerifyManifest(*m, cluster_key_).ok() ? "good"
                                                             : "invalid";
    // A manifest moved under another owner's or label's path is not that owner's checkpoint.
    if (m->owner != ref.owner || m->label != ref.label) c.state = "invalid";
    c.location = store->Describe() + "/" + ref.Path();
    c.manifest = *text;
    now[ref.id] = c;
    found.push_back(std::move(c));
  }
  CEDANA_RETURN_IF_ERROR(catalog_.SyncCheckpoints(found));
  known_ = std::move(now);
  return OkStatus();
}

}  // namespace cedana::controller
