// TcpPolicy: how a dump treats the tree's connected TCP sockets (engine/tcp_connections.h).
// A connection whose two ends are both in the tree (a loopback pair: an MPI launcher and its
// ranks, a program and its own server) is always checkpointed established: the tree is
// restored whole, so both ends come back together. For a connection to a peer outside the
// tree, checkpoint.tcp (CEDANA_CHECKPOINT_TCP, a job's own CEDANA_CHECKPOINT_TCP, or `cedana
// dump --tcp-established|--tcp-close`) decides:
//   refuse       (default) the checkpoint is refused, naming the peer; the job runs on
//   established  restored connected (works where the tree comes back on the same node with the
//                peer still there; the network stays locked for it until then)
//   close        restored closed: the program sees the connection reset and may reconnect
// CRIU applies one mode to a whole tree, so with `close` an internal connection is closed too.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "engine/process_control.h"
#include "engine/tcp_connections.h"

namespace cedana::daemon {

// checkpoint.tcp's words (common/config.h); kInvalidArgument naming the valid values.
Result<OutsideTcp> ParseOutsideTcp(const std::string& value);

// What CRIU is told.
enum class TcpMode { kNone, kEstablished, kClose };
std::string TcpModeName(TcpMode mode);                      // "", "established", "close"
Result<TcpMode> ParseTcpModeName(const std::string& name);  // from a manifest

struct TcpDecision {
  TcpMode mode = TcpMode::kNone;
  bool all_internal = true;  // no peer outside the tree: nothing to keep the lock for
  std::set<uint16_t> ports;  // the tree's bound local ports, which a restore binds again
};
// kUnsupported naming the first outside peer when `outside` refuses it.
Result<TcpDecision> DecideTcp(const std::vector<engine::TcpConnection>& connections,
                              OutsideTcp outside);
// DecideTcp for the tree rooted at `root`, its sockets read from /proc now (while it runs: a
// connection made before CRIU freezes it fails the dump, and the tree runs on), with its
// ports. With
// `criu_unprivileged` (CRIU runs as the owner, without the right to set the network lock) a
// tree whose connections would be restored established is refused.
Result<TcpDecision> DecideTcpForTree(engine::ProcessControl& processes, pid_t root,
                                     OutsideTcp outside, bool criu_unprivileged);

}  // namespace cedana::daemon
