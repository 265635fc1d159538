#include "slurm/batch_script_env.h"

#include <cctype>

#include "slurm/text.h"

namespace cedana::slurm {
namespace {

constexpr std::string_view kDirective = "#SBATCH";
constexpr std::string_view kExportOpt = "--export";

// True when the line holds a command: its first non-space character is not '#'.
bool IsCommandLine(std::string_view line) {
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    return c != '#';
  }
  return false;
}

// Splits the rest of an #SBATCH line into arguments: whitespace separates, "..." groups,
// backslash escapes one character, and an unquoted '#' at the start of an argument ends the line.
std::vector<std::string> SplitArguments(std::string_view rest) {
  std::vector<std::string> args;
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && std::isspace(static_cast<unsigned char>(rest[i]))) ++i;
    if (i >= rest.size() || rest[i] == '#') break;
    std::string arg;
    bool quoted = false;
    for (; i < rest.size(); ++i) {
      char c = rest[i];
      if (!quoted && std::isspace(static_cast<unsigned char>(c))) break;
      if (c == '\\' && i + 1 < rest.size()) {
        arg.push_back(rest[++i]);
      } else if (c == '"') {
        quoted = !quoted;
      } else {
        arg.push_back(c);
      }
    }
    args.push_back(std::move(arg));
  }
  return args;
}

// The comma-separated items of an --export value, empty ones included.
std::vector<std::string_view> ExportItems(std::string_view value) {
  std::vector<std::string_view> items;
  for (size_t pos = 0; pos <= value.size();) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    items.push_back(value.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return items;
}

void SetVar(std::string_view key, std::string_view value, std::string_view origin,
            CedanaJobSettings* s) {
  std::string note = std::string(key) + "=" + std::string(value);
  if (!origin.empty()) note += " (" + std::string(origin) + ")";
  if (key == kEnableVar) {
    s->enable = ParseEnableValue(value);
    s->enable_set = true;
  } else if (key == kCheckpointVar) {
    s->label = std::string(value);
    s->label_set = true;
  } else {
    return;
  }
  s->notes.push_back(std::move(note));
}

}  // namespace

bool ParseEnableValue(std::string_view value) {
  return value == "1" || IEquals(value, "true") || IEquals(value, "yes") || IEquals(value, "on");
}

std::vector<std::vector<std::string>> SbatchDirectives(std::string_view script,
                                                       std::vector<int>* line_numbers) {
  std::vector<std::vector<std::string>> out;
  int lineno = 0;
  size_t pos = 0;
  while (pos < script.size()) {
    size_t end = script.find('\n', pos);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    ++lineno;
    if (line.substr(0, kDirective.size()) == kDirective) {
      out.push_back(SplitArguments(line.substr(kDirective.size())));
      if (line_numbers != nullptr) line_numbers->push_back(lineno);
      continue;
    }
    // sbatch stops reading options at the first command: later #SBATCH lines are comments.
    if (IsCommandLine(line)) break;
  }
  return out;
}

void ApplyExportValue(std::string_view value, std::string_view origin,
                      CedanaJobSettings* settings) {
  for (std::string_view item : ExportItems(value)) {
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    SetVar(item.substr(0, eq), item.substr(eq + 1), origin, settings);
  }
}

std::vector<std::pair<std::string, std::string>> CedanaOnlyExport(std::string_view value) {
  constexpr std::string_view kCedanaPrefix = "CEDANA_";
  std::vector<std::pair<std::string, std::string>> vars;
  if (value.empty()) return vars;
  for (std::string_view item : ExportItems(value)) {
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == kCedanaPrefix.size() ||
        item.substr(0, kCedanaPrefix.size()) != kCedanaPrefix)
      return {};
    vars.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return vars;
}

CedanaJobSettings ParseBatchScript(std::string_view script) {
  CedanaJobSettings s;
  std::vector<int> lines;
  auto directives = SbatchDirectives(script, &lines);
  for (size_t d = 0; d < directives.size(); ++d) {
    const auto& args = directives[d];
    std::string origin = "#SBATCH line " + std::to_string(lines[d]);
    for (size_t i = 0; i < args.size(); ++i) {
      std::string_view arg = args[i];
      if (arg == kExportOpt) {
        if (i + 1 < args.size()) ApplyExportValue(args[++i], origin, &s);
      } else if (arg.substr(0, kExportOpt.size() + 1) == std::string(kExportOpt) + "=") {
        ApplyExportValue(arg.substr(kExportOpt.size() + 1), origin, &s);
      }
    }
  }
  return s;
}

CedanaJobSettings ParseEnvironment(const std::vector<std::string>& env) {
  CedanaJobSettings s;
  for (const auto& entry : env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    SetVar(std::string_view(entry).substr(0, eq), std::string_view(entry).substr(eq + 1),
           "environment", &s);
  }
  return s;
}

CedanaJobSettings ParseEnvironment(const char* const* env, size_t count) {
  std::vector<std::string> entries;
  if (env != nullptr)
    for (size_t i = 0; i < count; ++i)
      if (env[i] != nullptr) entries.emplace_back(env[i]);
  return ParseEnvironment(entries);
}

CedanaJobSettings Merge(const CedanaJobSettings& script, const CedanaJobSettings& explicit_env) {
  CedanaJobSettings m = script;
  if (explicit_env.enable_set) {
    m.enable = explicit_env.enable;
    m.enable_set = true;
  }
  if (explicit_env.label_set) {
    m.label = explicit_env.label;
    m.label_set = true;
  }
  m.notes.insert(m.notes.end(), explicit_env.notes.begin(), explicit_env.notes.end());
  return m;
}

}  // namespace cedana::slurm
