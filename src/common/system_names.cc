#include "common/system_names.h"

#include <pwd.h>
#include <unistd.h>

namespace cedana {

std::string UserName(uid_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) return found->pw_name;
  return "uid-" + std::to_string(uid);
}

Result<uid_t> UidOfUser(const std::string& user) {
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  if (::getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &found) != 0 || found == nullptr)
    return NotFoundError("user " + user + " does not exist on this node");
  return pw.pw_uid;
}

std::string NodeName(const Config& config) {
  if (!config.node_name.empty()) return config.node_name;
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace cedana
