// Names this machine gives: user names of uids (and back), and this node's name. Stateless;
// thread-safe (the reentrant libc lookups).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/result.h"

namespace cedana {

// The user name of uid, or "uid-<n>" when it has none.
std::string UserName(uid_t uid);
// The supplementary groups of uid (with gid), as setgroups() wants them; {gid} when uid has no
// passwd entry.
std::vector<gid_t> GroupsOf(uid_t uid, gid_t gid);
// The uid of a user name; kNotFound when the user does not exist here.
Result<uid_t> UidOfUser(const std::string& user);
// The uid and primary gid of a user name; kNotFound when the user does not exist here.
Result<std::pair<uid_t, gid_t>> IdsOfUser(const std::string& user);
// This node's name in manifests and towards the controller: daemon.node_name, else the host name.
std::string NodeName(const Config& config);

}  // namespace cedana
