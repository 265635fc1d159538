// ProcessControl: what the checkpoint core does to and reads from the processes it checkpoints
// (signals, waits, identity, memory, sockets, CRIU's network lock), as an interface so that its
// rollbacks can be unit-tested against processes that do not exist. HostProcesses is the real
// one, over /proc (engine/process_tree.h), sock_diag (engine/tcp_connections.h) and nftables
// (engine/network_lock.h). Implementations are thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/tcp_connections.h"

namespace cedana::engine {

class ProcessControl {
 public:
  virtual ~ProcessControl() = default;

  // Sends `sig` to every process of the tree; returns how many got it.
  virtual int SignalTree(pid_t root, int sig) = 0;
  // Until `pid` is gone and reaped, at most `timeout`; false if it still runs then (a zombie left
  // at the timeout counts as gone). engine::WaitUntilGone.
  virtual bool WaitUntilGone(pid_t pid, std::chrono::milliseconds timeout) = 0;
  // With the pid, which process it is (ProcessStartTime); 0 when it is gone.
  virtual uint64_t StartTime(pid_t pid) = 0;
  // Whether a tracer (a CRIU at work) holds the process.
  virtual bool Traced(pid_t pid) = 0;
  // About what a dump of the tree writes (TreeResidentBytes).
  virtual uint64_t ResidentBytes(pid_t root) = 0;
  virtual Result<TreeTcp> ReadTcp(pid_t root) = 0;
  // Undoes the network lock a CRIU dump (its log at `dump_log`) left on a stopped tree, whose
  // root is `continued_root` when the tree is continued, 0 when it is gone (UndoLeftLock).
  virtual Status UndoNetworkLock(const std::string& dump_log, pid_t continued_root) = 0;
};

class HostProcesses : public ProcessControl {
 public:
  int SignalTree(pid_t root, int sig) override;
  bool WaitUntilGone(pid_t pid, std::chrono::milliseconds timeout) override;
  uint64_t StartTime(pid_t pid) override;
  bool Traced(pid_t pid) override;
  uint64_t ResidentBytes(pid_t root) override;
  Result<TreeTcp> ReadTcp(pid_t root) override;
  Status UndoNetworkLock(const std::string& dump_log, pid_t continued_root) override;
};

}  // namespace cedana::engine
