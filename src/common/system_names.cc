#include "common/system_names.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace cedana {

std::string UserName(uid_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr)
    return found->pw_name;
  return "uid-" + std::to_string(uid);
}

std::vector<gid_t> GroupsOf(uid_t uid, gid_t gid) {
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) != 0 || found == nullptr) return {gid};
  int n = 64;
  std::vector<gid_t> groups(n);
  if (::getgrouplist(found->pw_name, gid, groups.data(), &n) < 0) {
    groups.resize(n);
    ::getgrouplist(found->pw_name, gid, groups.data(), &n);
  }
  groups.resize(n);
  return groups;
}

Result<uid_t> UidOfUser(const std::string& user) {
  CEDANA_ASSIGN_OR_RETURN(auto ids, IdsOfUser(user));
  return ids.first;
}

Result<std::pair<uid_t, gid_t>> IdsOfUser(const std::string& user) {
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &found) != 0 || found == nullptr)
    return NotFoundError("user " + user + " does not exist on this node");
  return std::pair{pw.pw_uid, pw.pw_gid};
}

std::string NodeName(const Config& config) {
  if (!config.node.node_name.empty()) return config.node.node_name;
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace cedana
