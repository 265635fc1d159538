#include "engine/process_tree.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <sstream>

#include "common/fs.h"

namespace cedana::engine {
namespace {

std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  auto tasks = fs::ListDir("/proc/" + std::to_string(pid) + "/task");
  if (!tasks.has_value()) return out;
  for (const auto& tid : *tasks) {
    // fs::ReadFile, not ifstream: libstdc++ throws when /proc reads fail with ESRCH (a task
    // exiting under us), and that is an ordinary outcome here.
    auto text = fs::ReadFile("/proc/" + std::to_string(pid) + "/task/" + tid + "/children");
    if (!text.has_value()) continue;
    std::istringstream in(*text);
    pid_t child;
    while (in >> child) out.push_back(child);
  }
  return out;
}

}  // namespace

Result<std::vector<pid_t>> ProcessTreeOf(pid_t root) {
  if (!fs::Exists("/proc/" + std::to_string(root)))
    return NotFoundError("process " + std::to_string(root) + " does not exist");
  std::vector<pid_t> tree;
  std::deque<pid_t> queue{root};
  while (!queue.empty()) {
    pid_t p = queue.front();
    queue.pop_front();
    tree.push_back(p);
    for (pid_t c : ChildrenOf(p)) queue.push_back(c);
  }
  return tree;
}

int SignalTree(pid_t root, int sig) {
  auto tree = ProcessTreeOf(root);
  if (!tree.has_value()) return 0;
  int n = 0;
  for (pid_t p : *tree)
    if (::kill(p, sig) == 0) ++n;
  return n;
}

// The fields of /proc/<pid>/stat after "pid (comm)", the state first; empty when it is gone.
// comm may contain spaces and parentheses, so they start after the last ')'.
std::vector<std::string> StatFieldsAfterComm(pid_t pid) {
  auto text = fs::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  std::vector<std::string> fields;
  if (!text.has_value()) return fields;
  size_t close = text->rfind(')');
  if (close == std::string::npos) return fields;
  std::istringstream rest(text->substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

char ProcessState(pid_t pid) {
  std::vector<std::string> fields = StatFieldsAfterComm(pid);
  return fields.empty() ? 0 : fields[0][0];
}

uint64_t ProcessStartTime(pid_t pid) {
  std::vector<std::string> fields = StatFieldsAfterComm(pid);  // field 3 of stat is [0]
  return fields.size() > 19 ? std::strtoull(fields[19].c_str(), nullptr, 10) : 0;
}

std::optional<uint64_t> StatusNumber(pid_t pid, std::string_view key) {
  auto text = fs::ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!text.has_value()) return std::nullopt;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == ':')
      return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
  return std::nullopt;
}

pid_t NamespacePid(pid_t pid) {
  auto text = fs::ReadFile("/proc/" + std::to_string(pid) + "/status");
  if (!text.has_value()) return 0;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("NSpid:"))
      return static_cast<pid_t>(
          std::strtol(line.c_str() + line.find_last_of(" \t") + 1, nullptr, 10));
  return 0;
}

pid_t TreeProcessWithNamespacePid(pid_t root, pid_t ns_pid) {
  auto tree = ProcessTreeOf(root);
  if (!tree.has_value()) return 0;
  for (pid_t pid : *tree)
    if (NamespacePid(pid) == ns_pid) return pid;
  return 0;
}

uint64_t TreeResidentBytes(pid_t root) {
  auto tree = ProcessTreeOf(root);
  if (!tree.has_value()) return 0;
  uint64_t kib = 0;
  for (pid_t pid : *tree) kib += StatusNumber(pid, "VmRSS").value_or(0);
  return kib * 1024;
}

bool WaitUntilGone(pid_t pid, std::chrono::milliseconds timeout) {
  constexpr auto kPoll = std::chrono::milliseconds(20);
  for (auto waited = std::chrono::milliseconds(0);; waited += kPoll) {
    char state = ProcessState(pid);
    if (state == 0) return true;
    if (waited >= timeout) return state == 'Z';
    ::usleep(static_cast<useconds_t>(std::chrono::microseconds(kPoll).count()));
  }
}

}  // namespace cedana::engine
