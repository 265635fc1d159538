#include "slurm/slurm_conf_editor.h"

#include <cctype>
#include <vector>

#include "slurm/plugin_builds.h"
#include "slurm/text.h"

namespace cedana::slurm {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// One line of the file, without its '\n' (kept in `newline`), so edits rebuild it exactly.
struct Line {
  std::string_view text;
  bool newline = false;
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      lines.push_back({text.substr(pos), false});
      break;
    }
    lines.push_back({text.substr(pos, end - pos), true});
    pos = end + 1;
  }
  return lines;
}

// Where `Key=Value` sits in a line: [value_begin, value_end) is the value's text.
struct KeyValue {
  size_t value_begin = 0;
  size_t value_end = 0;
};

// Matches a line whose first word is `key` followed by '=' (spaces allowed around it).
std::optional<KeyValue> MatchKey(std::string_view line, std::string_view key) {
  size_t i = 0;
  while (i < line.size() && IsSpace(line[i])) ++i;
  if (line.size() - i < key.size() || !IEquals(line.substr(i, key.size()), key))
    return std::nullopt;
  i += key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= line.size() || line[i] != '=') return std::nullopt;
  ++i;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  size_t end = i;
  while (end < line.size() && !IsSpace(line[end]) && line[end] != '#') ++end;
  return KeyValue{i, end};
}

std::string Trimmed(std::string_view v) {
  while (!v.empty() && IsSpace(v.front())) v.remove_prefix(1);
  while (!v.empty() && IsSpace(v.back())) v.remove_suffix(1);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return std::string(v);
}

// "task/affinity" and "affinity" name the same plugin in a list of `type` plugins.
std::string_view ShortName(std::string_view entry) {
  size_t slash = entry.find('/');
  return slash == std::string_view::npos ? entry : entry.substr(slash + 1);
}

// The entries of a comma-separated list, as written.
std::vector<std::string_view> ListEntries(std::string_view list) {
  std::vector<std::string_view> entries;
  size_t pos = 0;
  while (pos <= list.size() && !list.empty()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    entries.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return entries;
}

std::string Join(const std::vector<Line>& lines) {
  std::string out;
  for (const auto& l : lines) {
    out.append(l.text);
    if (l.newline) out.push_back('\n');
  }
  return out;
}

// Appends `line` on its own line at the end of `text`.
std::string AppendLine(std::string_view text, std::string_view line) {
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  out.append(line);
  out.push_back('\n');
  return out;
}

}  // namespace

std::optional<std::string> ReadConfKey(std::string_view conf, std::string_view key) {
  std::optional<std::string> value;
  for (const auto& line : SplitLines(conf)) {
    if (auto kv = MatchKey(line.text, key))
      value = Trimmed(line.text.substr(kv->value_begin, kv->value_end - kv->value_begin));
  }
  return value;
}

std::string ReadConfKeyOr(std::string_view conf, std::string_view key, std::string_view fallback) {
  auto v = ReadConfKey(conf, key);
  return v && !v->empty() ? *v : std::string(fallback);
}

std::string PluginDir(std::string_view conf) {
  std::string dirs = ReadConfKeyOr(conf, "PluginDir", kDefaultPluginDir);
  size_t colon = dirs.find(':');
  return colon == std::string::npos ? dirs : dirs.substr(0, colon);
}

bool ListHasPlugin(std::string_view list, std::string_view plugin) {
  for (std::string_view entry : ListEntries(list)) {
    std::string trimmed = Trimmed(entry);
    if (IEquals(ShortName(trimmed), ShortName(plugin))) return true;
  }
  return false;
}

std::string AddPluginToList(std::string_view conf, std::string_view key, std::string_view plugin,
                            std::string_view when_absent) {
  std::vector<Line> lines = SplitLines(conf);
  std::optional<size_t> last;
  for (size_t i = 0; i < lines.size(); ++i)
    if (MatchKey(lines[i].text, key)) last = i;
  if (!last) return AppendLine(conf, std::string(key) + "=" + std::string(when_absent));

  std::string_view text = lines[*last].text;
  KeyValue kv = *MatchKey(text, key);
  std::string_view value = text.substr(kv.value_begin, kv.value_end - kv.value_begin);
  if (ListHasPlugin(value, plugin)) return std::string(conf);
  bool only_none = true;
  for (std::string_view entry : ListEntries(value))
    if (!entry.empty() && !IEquals(ShortName(entry), "none")) only_none = false;
  std::string new_value =
      only_none ? std::string(plugin) : std::string(value) + "," + std::string(plugin);
  std::string edited = std::string(text.substr(0, kv.value_begin)) + new_value +
                       std::string(text.substr(kv.value_end));
  lines[*last].text = edited;  // `edited` outlives Join below
  return Join(lines);
}

std::string AddCedanaToSlurmConf(std::string_view conf) {
  std::string out = AddPluginToList(conf, "TaskPlugin", "task/cedana", "task/affinity,task/cedana");
  out = AddPluginToList(out, "CliFilterPlugins", "cli_filter/cedana", "cli_filter/cedana");
  out = AddPluginToList(out, "JobSubmitPlugins", "job_submit/cedana", "job_submit/cedana");
  return out;
}

bool PreemptNoticeInPreemptParameters(const std::string& slurm_version) {
  auto v = ParseSlurmVersion(slurm_version);
  return v && *v >= std::vector<int>{23, 2, 0};
}

std::string AddPreemptNoticeToSlurmConf(std::string_view conf, const std::string& slurm_version) {
  if (PreemptNoticeInPreemptParameters(slurm_version))
    return AddPluginToList(conf, "PreemptParameters", "send_user_signal", "send_user_signal");
  return AddPluginToList(conf, "SlurmctldParameters", "preempt_send_user_signal",
                         "preempt_send_user_signal");
}

bool PlugstackLoadsCedana(std::string_view plugstack) {
  for (const auto& line : SplitLines(plugstack)) {
    std::string_view t = line.text;
    while (!t.empty() && IsSpace(t.front())) t.remove_prefix(1);
    if (t.empty() || t.front() == '#') continue;
    size_t hash = t.find('#');
    if (t.substr(0, hash).find("spank_cedana.so") != std::string_view::npos) return true;
  }
  return false;
}

std::string AddSpankToPlugstack(std::string_view plugstack, std::string_view spank_so_path) {
  if (PlugstackLoadsCedana(plugstack)) return std::string(plugstack);
  return AppendLine(plugstack, "required " + std::string(spank_so_path));
}

}  // namespace cedana::slurm
