#include "image/catalog.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"

namespace cedana::image {
namespace {

// Reads and parses one manifest; nullopt (after a warning) when it cannot be used.
std::optional<Manifest> LoadManifest(storage::CheckpointStore& store,
                                     const storage::CheckpointRef& ref) {
  auto text = store.ReadManifest(ref);
  if (!text.has_value()) {
    // kNotFound: deleted (retention, another node) between List and here.
    if (text.error().code() != Code::kNotFound) {
      log::Warn("catalog: checkpoint {} in {}: {}", ref.Path(), store.Describe(),
                text.error().ToString());
    }
    return std::nullopt;
  }
  auto manifest = ParseManifest(*text);
  if (!manifest.has_value()) {
    log::Warn("catalog: checkpoint {} in {}: skipping unreadable manifest: {}", ref.Path(),
              store.Describe(), manifest.error().ToString());
    return std::nullopt;
  }
  return std::move(manifest).value();
}

}  // namespace

Result<std::vector<CatalogEntry>> ListEntries(storage::CheckpointStore& store,
                                              const std::optional<std::string>& owner,
                                              const std::optional<std::string>& label) {
  CEDANA_ASSIGN_OR_RETURN(auto refs, store.List(owner, label));
  std::vector<CatalogEntry> entries;
  entries.reserve(refs.size());
  for (storage::CheckpointRef& ref : refs) {
    std::optional<Manifest> m = LoadManifest(store, ref);
    if (m.has_value()) entries.push_back({std::move(ref), std::move(*m)});
  }
  std::sort(entries.begin(), entries.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
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
  for (CatalogEntry& e : entries) out.push_back(std::move(e.manifest));
  return out;
}

Result<std::pair<storage::CheckpointRef, Manifest>> FindById(storage::CheckpointStore& store,
                                                             const std::string& id) {
  CEDANA_ASSIGN_OR_RETURN(auto refs, store.List(std::nullopt, std::nullopt));
  for (storage::CheckpointRef& ref : refs) {
    if (ref.id != id) continue;
    std::optional<Manifest> m = LoadManifest(store, ref);
    if (m.has_value()) return std::make_pair(std::move(ref), std::move(*m));
  }
  return NotFoundError(fmt::format("checkpoint {} not found in {}", id, store.Describe()));
}

Status ApplyRetention(storage::CheckpointStore& store, const std::string& owner,
                      const std::string& label, int keep) {
  if (keep <= 0) return OkStatus();
  CEDANA_ASSIGN_OR_RETURN(auto entries, ListEntries(store, owner, label));
  Status first;
  for (size_t i = static_cast<size_t>(keep); i < entries.size(); ++i) {
    const storage::CheckpointRef& ref = entries[i].ref;
    Status s = store.Delete(ref);
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
