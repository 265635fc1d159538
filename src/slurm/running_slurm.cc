#include "slurm/running_slurm.h"

#include <sstream>

#include "common/subprocess.h"
#include "slurm/slurm_conf_editor.h"

namespace cedana::slurm {
namespace {

std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\n'))
    v.remove_suffix(1);
  return v;
}

Result<std::string> Scontrol(std::vector<std::string> args) {
  subprocess::Command scontrol;
  scontrol.argv = {"scontrol"};
  scontrol.argv.insert(scontrol.argv.end(), args.begin(), args.end());
  std::string out;
  Result<subprocess::Exit> exit =
      subprocess::Run(scontrol, subprocess::Output::kStdoutAndStderr, &out);
  if (!exit.has_value())
    return NotFoundError("scontrol cannot be run (" + exit.error().message() + ")");
  if (!exit->ok())
    return UnavailableError("scontrol " + args.front() + " " + exit->Describe() + ": " +
                            std::string(Trim(out)));
  return out;
}

}  // namespace

Result<std::vector<std::string>> Hostnames(const std::string& list) {
  CEDANA_ASSIGN_OR_RETURN(std::string out, Scontrol({"show", "hostnames", list}));
  std::vector<std::string> names;
  std::istringstream in(out);
  for (std::string n; std::getline(in, n);)
    if (!n.empty()) names.push_back(n);
  return names;
}

Result<std::string> NodeAddress(const std::string& name) {
  CEDANA_ASSIGN_OR_RETURN(std::string out, Scontrol({"show", "node", "-o", name}));
  std::istringstream in(out);
  for (std::string field; in >> field;)
    if (field.starts_with("NodeAddr=")) return field.substr(9);
  return NotFoundError("SLURM knows no address of node " + name);
}

std::string ParseScontrolVersion(std::string_view output) {
  // scontrol may warn first (its stderr is read too): the version is the line "slurm X"
  // (upstream's builds) or "slurm-wlm X" (Debian's).
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = Trim(output.substr(pos, end - pos));
    pos = end + 1;
    size_t space = line.find(' ');
    std::string_view name = line.substr(0, space);
    if (space == std::string_view::npos || (name != "slurm" && name != "slurm-wlm")) continue;
    std::string_view version = Trim(line.substr(space + 1));
    if (!version.empty() && version.find_first_not_of("0123456789.-rc") == std::string_view::npos)
      return std::string(version);
  }
  return "";
}

Result<std::string> InstalledSlurmVersion() {
  CEDANA_ASSIGN_OR_RETURN(std::string out, Scontrol({"--version"}));
  std::string version = ParseScontrolVersion(out);
  if (version.empty())
    return UnavailableError("scontrol --version said: " + std::string(Trim(out)));
  return version;
}

std::map<std::string, std::string> ParseShowConfig(std::string_view output) {
  std::map<std::string, std::string> config;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = line.find(" = ");
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, eq));
    if (key.empty() || key.find(' ') != std::string_view::npos) continue;
    std::string_view value = Trim(line.substr(eq + 3));
    config[std::string(key)] = value == "(null)" ? "" : std::string(value);
  }
  return config;
}

Result<std::map<std::string, std::string>> RunningSlurmConfig() {
  CEDANA_ASSIGN_OR_RETURN(std::string out, Scontrol({"show", "config"}));
  return ParseShowConfig(out);
}

std::vector<std::string> MissingCedanaPlugins(const std::map<std::string, std::string>& config,
                                              std::string_view plugstack) {
  std::vector<std::string> missing;
  auto value = [&](const char* key) {
    auto it = config.find(key);
    return it == config.end() ? std::string_view() : std::string_view(it->second);
  };
  for (auto [key, plugin] :
       {std::pair{"TaskPlugin", "task/cedana"}, std::pair{"JobSubmitPlugins", "job_submit/cedana"},
        std::pair{"CliFilterPlugins", "cli_filter/cedana"}})
    if (!ListHasPlugin(value(key), plugin)) missing.push_back(plugin);
  if (!PlugstackLoadsCedana(plugstack)) missing.push_back("spank_cedana.so");
  return missing;
}

}  // namespace cedana::slurm
