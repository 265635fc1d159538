// ConnectionLimits: which connections the node daemon serves at once. Any local user may connect
// to its socket, so one user holding many connections open (slow or idle) must not stop slurmd
// registering jobs (root) or another user's dump: each non-root uid has its own cap, all
// non-root uids together a shared one, and root keeps connections nobody else can take.
// Decision only, no I/O. Thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>

namespace cedana::daemon {

struct ConnectionCaps {
  int total = 256;             // all connections at once
  int reserved_for_root = 32;  // of `total`, only root's
  int per_user = 16;           // one non-root uid's
};

class ConnectionLimits {
 public:
  explicit ConnectionLimits(ConnectionCaps caps = {}) : caps_(caps) {}

  // Counts a new connection of `uid` and returns "" when it may be served; otherwise counts
  // nothing and returns why not, for the refusal sent to the peer and the log.
  std::string Admit(uid_t uid);
  // Ends a connection Admit counted.
  void Release(uid_t uid);
  // A connection of `uid` waits for its turn in the dump queue: while parked it counts against
  // no cap. The caller parks at most one connection per running workload of `uid` (the first
  // dump of each workload), so parked ones are bounded by the jobs SLURM gave the user here:
  // a user with 50 jobs on the node, all preempted at once, keeps all 50 dumps.
  void Park(uid_t uid);
  void Unpark(uid_t uid);
  int open() const;  // parked ones too

 private:
  void Uncount(uid_t uid);  // requires mu_

  const ConnectionCaps caps_;
  mutable std::mutex mu_;
  int total_ = 0, non_root_ = 0, parked_ = 0;
  std::map<uid_t, int> per_uid_;
};

}  // namespace cedana::daemon
