#include "daemon/cgroup_join.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/fs.h"

namespace cedana::daemon {

std::vector<std::string> CgroupProcsFilesOf(pid_t pid, const std::string& cgroup_root) {
  std::vector<std::string> files;
  auto text = fs::ReadFile(fmt::format("/proc/{}/cgroup", pid));
  if (!text.has_value()) return files;
  std::istringstream in(*text);
  std::string line;
  // "4:memory:/slurm/uid_0/job_12/step_batch", "9:name=systemd:/x", "0::/x" (v2)
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (path.empty() || path == "/") continue;
    std::string mount;
    if (controllers.empty()) {
      mount = fs::Exists(cgroup_root + "/unified") ? cgroup_root + "/unified" : cgroup_root;
    } else {
      if (controllers.rfind("name=", 0) == 0) controllers = controllers.substr(5);
      mount = cgroup_root + "/" + controllers;
    }
    std::string procs = mount + path + "/cgroup.procs";
    if (fs::Exists(procs)) files.push_back(procs);
  }
  return files;
}

int JoinCgroups(const std::vector<std::string>& procs_files, const std::vector<pid_t>& pids,
                std::string* first_error) {
  int failed = 0;
  for (const auto& file : procs_files) {
    for (pid_t pid : pids) {
      std::ofstream out(file);
      out << pid << std::flush;
      if (!out) {
        if (failed++ == 0 && first_error)
          *first_error = fmt::format("moving {} into {}", pid, file);
      }
    }
  }
  return failed;
}

}  // namespace cedana::daemon
