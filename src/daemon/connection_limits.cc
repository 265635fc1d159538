#include "daemon/connection_limits.h"

#include <fmt/format.h>

namespace cedana::daemon {

std::string ConnectionLimits::Admit(uid_t uid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (total_ >= caps_.total)
    return fmt::format("the node daemon serves {} connections already; try again", caps_.total);
  if (uid != 0) {
    int& mine = per_uid_[uid];
    if (mine >= caps_.per_user) {
      return fmt::format(
          "uid {} has {} connections to the node daemon open already (the most one "
          "user may); close some and try again",
          uid, mine);
    }
    if (non_root_ >= caps_.total - caps_.reserved_for_root)
      return "the node daemon serves as many users' connections as it may; try again";
    ++mine;
    ++non_root_;
  }
  ++total_;
  return "";
}

void ConnectionLimits::Uncount(uid_t uid) {
  --total_;
  if (uid == 0) return;
  --non_root_;
  if (auto it = per_uid_.find(uid); it != per_uid_.end() && --it->second <= 0) per_uid_.erase(it);
}

void ConnectionLimits::Release(uid_t uid) {
  std::lock_guard<std::mutex> lock(mu_);
  Uncount(uid);
}

void ConnectionLimits::Park(uid_t uid) {
  std::lock_guard<std::mutex> lock(mu_);
  Uncount(uid);
  ++parked_;
}

void ConnectionLimits::Unpark(uid_t uid) {
  std::lock_guard<std::mutex> lock(mu_);
  --parked_;
  ++total_;
  if (uid == 0) return;
  ++non_root_;
  ++per_uid_[uid];
}

int ConnectionLimits::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_ + parked_;
}

}  // namespace cedana::daemon
