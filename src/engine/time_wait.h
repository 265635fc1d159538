// TIME_WAIT sockets in the way of a restore. A program that closed connections shortly before
// its checkpoint leaves them in TIME_WAIT for a minute. A fresh program would bind another port;
// a restore must bind the ports the tree held, and Linux refuses a bind to a port with a
// TIME_WAIT socket whose own socket lacked SO_REUSEADDR (OpenMPI's TCP transport, many servers):
// CRIU fails "Can't bind inet socket: Address already in use". Those sockets hold no process:
// on the node of the checkpoint they are what remains of the tree's own connections, and on
// another node they would make the restore fail just the same. So every restore ends the ones
// on the tree's ports first (SOCK_DESTROY over sock_diag, CAP_NET_ADMIN).
#pragma once

#include <cstdint>
#include <set>

#include "common/result.h"

namespace cedana::engine {

// Ends the TIME_WAIT TCP sockets (IPv4 and IPv6, this network namespace) whose local port is
// one of `ports`. Returns how many it ended.
Result<int> EndTimeWait(const std::set<uint16_t>& ports);

}  // namespace cedana::engine
