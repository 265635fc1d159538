#include "image/checkpoint_listing.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"
#include "image/chunk_sweep.h"

namespace cedana::image {
namespace {

// Reads and parses one manifest. kNotFound when it is gone (retention, another node, between List
// and here); any other error names the checkpoint and why it cannot be used.
Result<Manifest> LoadManifest(storage::CheckpointStore& store, const storage::CheckpointRef& ref) {
  auto text = store.ReadManifest(ref);
  if (!text.has_value()) return text.error();  // it names the manifest's path
  auto manifest = ParseManifest(*text);
  if (!manifest.has_value())
    return manifest.error().WithContext(
        fmt::format("checkpoint {} in {}: unreadable manifest", ref.Path(), store.Describe()));
  return manifest;
}

// LoadManifest for a listing: what cannot be used is skipped, after a warning.
std::optional<Manifest> LoadListed(storage::CheckpointStore& store,
                                   const storage::CheckpointRef& ref) {
  Result<Manifest> m = LoadManifest(store, ref);
  if (m.has_value()) return std::move(m).value();
  if (m.error().code() != Code::kNotFound) log::Warn("catalog: skipping {}", m.error().ToString());
  return std::nullopt;
}

}  // namespace

Result<std::vector<ListedCheckpoint>> ListEntries(storage::CheckpointStore& store,
                                                  const std::optional<std::string>& owner,
                                                  const std::optional<std::string>& label) {
  CEDANA_ASSIGN_OR_RETURN(auto refs, store.List(owner, label));
  std::vector<ListedCheckpoint> entries;
  entries.reserve(refs.size());
  for (storage::CheckpointRef& ref : refs) {
    std::optional<Manifest> m = LoadListed(store, ref);
    if (m.has_value()) entries.push_back({std::move(ref), std::move(*m)});
  }
  std::sort(entries.begin(), entries.end(),
            [](const ListedCheckpoint& a, const ListedCheckpoint& b) {
              if (a.manifest.created_at_ms != b.manifest.created_at_ms) {
                return a.manifest.created_at_ms > b.manifest.created_at_ms;
              }
              return a.ref.id > b.ref.id;
            });
  return entries;
}

Result<std::vector<Manifest>> ListManifests(storage::CheckpointStore& store,
                                            const std::optional<std::string>& owner,
                                            const std::optional<std::string>& label) {
  CEDANA_ASSIGN_OR_RETURN(auto entries, ListEntries(store, owner, label));
  std::vector<Manifest> out;
  out.reserve(entries.size());
  for (ListedCheckpoint& e : entries) out.push_back(std::move(e.manifest));
  return out;
}

Result<std::pair<storage::CheckpointRef, Manifest>> FindById(storage::CheckpointStore& store,
                                                             const std::string& id) {
  CEDANA_ASSIGN_OR_RETURN(auto refs, store.List(std::nullopt, std::nullopt));
  // The id names a checkpoint whose manifest cannot be used (a symlink, too large, not a
  // manifest): say why rather than that there is none.
  std::optional<Status> unusable;
  for (storage::CheckpointRef& ref : refs) {
    if (ref.id != id) continue;
    Result<Manifest> m = LoadManifest(store, ref);
    if (m.has_value()) return std::make_pair(std::move(ref), std::move(m).value());
    if (m.error().code() != Code::kNotFound && !unusable) unusable = m.error();
  }
  if (unusable) return *unusable;
  return NotFoundError(fmt::format("checkpoint {} not found in {}", id, store.Describe()));
}

Status ApplyRetention(storage::CheckpointStore& store, const std::string& owner,
                      const std::string& label, int keep) {
  if (keep <= 0) return OkStatus();
  CEDANA_ASSIGN_OR_RETURN(auto entries, ListEntries(store, owner, label));
  Status first;
  for (size_t i = static_cast<size_t>(keep); i < entries.size(); ++i) {
    const storage::CheckpointRef& ref = entries[i].ref;
    Status s = RemoveCheckpoint(store, ref);
    if (s.ok()) {
      log::Info("catalog: retention deleted checkpoint {} (keeping {} of {}/{})", ref.Path(), keep,
                owner, label);
    } else if (first.ok()) {
      first = std::move(s).WithContext("retention: deleting checkpoint " + ref.Path());
    }
  }
  return first;
}

}  // namespace cedana::image
