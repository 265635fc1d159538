#include "slurm/plugin_builds.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/ranges.h>

#include "common/fs.h"

namespace cedana::slurm {
std::optional<std::vector<int>> ParseSlurmVersion(const std::string& text) {
  std::vector<int> parts;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    int n = 0;
    auto [next, ec] = std::from_chars(p, end, n);
    if (ec != std::errc() || next == p) return std::nullopt;
    parts.push_back(n);
    p = next;
    if (p == end) break;
    if (*p != '.' || ++p == end) return std::nullopt;
  }
  if (parts.size() != 3) return std::nullopt;
  return parts;
}

std::string ListedBuilds(const std::vector<std::string>& versions) {
  return versions.empty() ? "none" : fmt::format("{}", fmt::join(versions, ", "));
}

std::vector<std::string> PluginBuilds(const std::string& store,
                                      const std::vector<std::string>& required) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(store, ec)) {
    std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || !ParseSlurmVersion(name)) continue;
    bool complete = std::all_of(required.begin(), required.end(), [&](const std::string& f) {
      return fs::Exists(entry.path().string() + "/" + f);
    });
    if (complete) out.push_back(name);
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return *ParseSlurmVersion(a) < *ParseSlurmVersion(b);
  });
  return out;
}

Result<std::string> ChoosePluginBuild(const std::string& store,
                                      const std::vector<std::string>& required,
                                      const std::optional<std::string>& slurm_version) {
  std::vector<std::string> builds = PluginBuilds(store, required);
  if (slurm_version) {
    if (std::find(builds.begin(), builds.end(), *slurm_version) == builds.end())
      return NotFoundError("the plugin store " + store + " has no build for SLURM " +
                           *slurm_version +
                           ", the version this node runs (builds: " + ListedBuilds(builds) +
                           "); SLURM loads its plugins only into the exact version they were "
                           "built for: build cedana on a machine with this SLURM's "
                           "libslurm-dev (scripts/setup.sh) and run cmake --install");
    return store + "/" + *slurm_version;
  }
  if (builds.size() == 1) return store + "/" + builds.front();
  if (builds.empty())
    return NotFoundError("the plugin store " + store +
                         " has no build of the SLURM plugins (build cedana with SLURM's "
                         "libslurm-dev installed, as scripts/setup.sh does, then run cmake "
                         "--install)");
  return FailedPreconditionError(
      "SLURM is not installed on this node (no scontrol), and the "
      "plugin store " +
      store + " has builds for several versions (" + ListedBuilds(builds) +
      "): name one with --slurm-version");
}

}  // namespace cedana::slurm
