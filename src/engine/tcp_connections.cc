#include "engine/tcp_connections.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "common/fs.h"
#include "engine/process_tree.h"

namespace cedana::engine {
namespace {

constexpr int kTcpClose = 7;
constexpr int kTcpListen = 10;

bool ParseHex(std::string_view s, uint64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// "0100007F:1F90": the address as the kernel prints it (32-bit words in host byte order).
bool ParseEndpoint(std::string_view s, bool ipv6, TcpEndpoint* e) {
  size_t colon = s.find(':');
  const size_t hex_len = ipv6 ? 32 : 8;
  uint64_t port = 0;
  if (colon != hex_len || !ParseHex(s.substr(colon + 1), &port) || port > 0xffff) return false;
  uint32_t words[4] = {};
  for (size_t w = 0; w < hex_len / 8; ++w) {
    uint64_t v = 0;
    if (!ParseHex(s.substr(w * 8, 8), &v)) return false;
    words[w] = static_cast<uint32_t>(v);
  }
  char buf[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(ipv6 ? AF_INET6 : AF_INET, words, buf, sizeof buf) == nullptr) return false;
  e->address = buf;
  e->port = static_cast<uint16_t>(port);
  return true;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::string FormatEndpoint(const TcpEndpoint& e) {
  if (e.address.find(':') != std::string::npos) return fmt::format("[{}]:{}", e.address, e.port);
  return fmt::format("{}:{}", e.address, e.port);
}

Result<std::vector<TcpSocket>> ParseProcNetTcp(std::string_view text, bool ipv6) {
  std::vector<TcpSocket> out;
  size_t pos = 0;
  bool header = true;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (header) {  // "  sl  local_address rem_address   st tx_queue ..."
      header = false;
      continue;
    }
    std::vector<std::string_view> f = Fields(line);
    if (f.empty()) continue;
    // sl local remote st tx:rx tr:when retrnsmt uid timeout inode ...
    TcpSocket s;
    uint64_t state = 0;
    if (f.size() < 10 || !ParseEndpoint(f[1], ipv6, &s.local) ||
        !ParseEndpoint(f[2], ipv6, &s.remote) || !ParseHex(f[3], &state) ||
        std::from_chars(f[9].data(), f[9].data() + f[9].size(), s.inode).ec != std::errc())
      return InvalidArgumentError(
          fmt::format("not a line of /proc/net/tcp{}: '{}'", ipv6 ? "6" : "", line));
    s.state = static_cast<int>(state);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<TcpConnection> ConnectionsOf(const std::vector<TcpSocket>& sockets,
                                         const std::set<uint64_t>& tree_inodes) {
  auto held = [&](const TcpSocket& s) { return s.inode != 0 && tree_inodes.count(s.inode) > 0; };
  std::vector<TcpConnection> out;
  for (const TcpSocket& s : sockets) {
    if (!held(s) || s.state == kTcpListen || s.state == kTcpClose) continue;
    TcpConnection c{s.local, s.remote, false};
    for (const TcpSocket& peer : sockets) {
      if (held(peer) && peer.local == s.remote && peer.remote == s.local) c.internal = true;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::set<uint16_t> LocalPortsOf(const std::vector<TcpSocket>& sockets,
                                const std::set<uint64_t>& tree_inodes) {
  std::set<uint16_t> out;
  for (const TcpSocket& s : sockets)
    if (s.inode != 0 && tree_inodes.count(s.inode) > 0 && s.local.port != 0)
      out.insert(s.local.port);
  return out;
}

namespace {

// The inodes of the sockets the tree rooted at `root` holds, and the TCP sockets of its network
// namespace (/proc/<root>/net/tcp and tcp6).
struct TreeSockets {
  std::set<uint64_t> inodes;
  std::vector<TcpSocket> tcp;
};

Result<TreeSockets> ReadTreeSockets(pid_t root) {
  CEDANA_ASSIGN_OR_RETURN(std::vector<pid_t> tree, ProcessTreeOf(root));
  TreeSockets out;
  for (pid_t pid : tree) {
    const std::string fd_dir = fmt::format("/proc/{}/fd", pid);
    Result<std::vector<std::string>> fds = fs::ListDir(fd_dir);
    if (!fds.has_value()) continue;  // the process ended meanwhile
    for (const std::string& fd : *fds) {
      std::error_code ec;
      std::string target = std::filesystem::read_symlink(fd_dir + "/" + fd, ec).string();
      uint64_t inode = 0;
      // "socket:[12345]"
      if (!ec && target.rfind("socket:[", 0) == 0 && target.back() == ']' &&
          std::from_chars(target.data() + 8, target.data() + target.size() - 1, inode).ec ==
              std::errc())
        out.inodes.insert(inode);
    }
  }
  for (bool ipv6 : {false, true}) {
    const std::string path = fmt::format("/proc/{}/net/tcp{}", root, ipv6 ? "6" : "");
    Result<std::string> text = fs::ReadFile(path);
    if (!text.has_value()) {
      if (ipv6 && text.error().code() == Code::kNotFound) continue;  // a kernel without IPv6
      return text.error();
    }
    CEDANA_ASSIGN_OR_RETURN(std::vector<TcpSocket> part, ParseProcNetTcp(*text, ipv6));
    out.tcp.insert(out.tcp.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace

Result<TreeTcp> ReadTreeTcp(pid_t root) {
  CEDANA_ASSIGN_OR_RETURN(TreeSockets sockets, ReadTreeSockets(root));
  return TreeTcp{ConnectionsOf(sockets.tcp, sockets.inodes),
                 LocalPortsOf(sockets.tcp, sockets.inodes)};
}

}  // namespace cedana::engine
