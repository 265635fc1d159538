// TcpConnections: the connected TCP sockets a process tree holds, and whether the other end of
// each is in the tree too. CRIU checkpoints a connected socket only with --tcp-established
// (restored in repair mode, the network locked while it dumps) or --tcp-close (restored
// closed); the dump decides between them, or refuses, from this (daemon/tcp_policy.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cedana::engine {

struct TcpEndpoint {
  std::string address;  // "127.0.0.1", "::1"
  uint16_t port = 0;
  bool operator==(const TcpEndpoint&) const = default;
};
// "10.0.0.5:5432", "[::1]:80"
std::string FormatEndpoint(const TcpEndpoint& e);

// One line of /proc/net/tcp or tcp6.
struct TcpSocket {
  uint64_t inode = 0;  // 0 for a socket no process holds (TIME_WAIT)
  TcpEndpoint local, remote;
  int state = 0;  // the kernel's TCP_* state (1 ESTABLISHED, 7 CLOSE, 10 LISTEN, ...)
};
// kInvalidArgument naming the line for text that is not /proc/net/tcp's format.
Result<std::vector<TcpSocket>> ParseProcNetTcp(std::string_view text, bool ipv6);

struct TcpConnection {
  TcpEndpoint local, remote;
  bool internal = false;  // the other end is a socket of the same tree
};
// The connected sockets (neither listening nor closed) among `sockets` whose inode is one of
// `tree_inodes`, each marked internal when its peer (remote and local swapped) is one too.
std::vector<TcpConnection> ConnectionsOf(const std::vector<TcpSocket>& sockets,
                                         const std::set<uint64_t>& tree_inodes);

// The local ports of the TCP sockets among `sockets` whose inode is one of `tree_inodes`
// (listening, connected or only bound): the ports a restore binds again.
std::set<uint16_t> LocalPortsOf(const std::vector<TcpSocket>& sockets,
                                const std::set<uint64_t>& tree_inodes);

// The TCP sockets of the tree rooted at `root`, from one read of /proc (the tree's network
// namespace's /proc/<root>/net/tcp and tcp6, and each process's socket descriptors).
struct TreeTcp {
  std::vector<TcpConnection> connections;  // ConnectionsOf
  std::set<uint16_t> local_ports;          // LocalPortsOf
};
Result<TreeTcp> ReadTreeTcp(pid_t root);

}  // namespace cedana::engine
