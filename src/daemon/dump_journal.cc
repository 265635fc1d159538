#include "daemon/dump_journal.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/log.h"

namespace cedana::daemon {

DumpJournal::DumpJournal(std::string state_dir) : dir_(std::move(state_dir) + "/dumps") {}

Status DumpJournal::Begin(const DumpIntent& d) const {
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir_, 0700));
  nlohmann::json j = {{"checkpoint_id", d.checkpoint_id},
                      {"owner", d.owner},
                      {"label", d.label},
                      {"workload_id", d.workload_id},
                      {"pid", d.pid},
                      {"pid_start", d.pid_start},
                      {"uid", d.uid},
                      {"gid", d.gid},
                      {"leave_running", d.leave_running}};
  return fs::WriteFileAtomic(dir_ + "/" + d.checkpoint_id + ".json", j.dump(), 0600);
}

void DumpJournal::End(const std::string& checkpoint_id) const {
  ::unlink((dir_ + "/" + checkpoint_id + ".json").c_str());
}

Result<std::vector<DumpIntent>> DumpJournal::Pending() const {
  std::vector<DumpIntent> out;
  auto names = fs::ListDir(dir_);
  if (!names.has_value()) {
    if (names.error().code() == Code::kNotFound) return out;
    return names.error();
  }
  for (const std::string& name : *names) {
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    Result<std::string> text = fs::ReadFile(dir_ + "/" + name);
    nlohmann::json j =
        text.has_value() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    if (!j.is_object()) {
      log::Warn("recovery: skipping unreadable dump record {}/{}", dir_, name);
      continue;
    }
    DumpIntent d;
    d.checkpoint_id = j.value("checkpoint_id", "");
    d.owner = j.value("owner", "");
    d.label = j.value("label", "");
    d.workload_id = j.value("workload_id", "");
    d.pid = j.value("pid", 0);
    d.pid_start = j.value("pid_start", uint64_t{0});
    d.uid = j.value("uid", 0u);
    d.gid = j.value("gid", 0u);
    d.leave_running = j.value("leave_running", false);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cedana::daemon
