#include "engine/network_lock.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "engine/process_tree.h"

namespace cedana::engine {

std::string LockTableInLog(const std::string& dump_log) {
  // "Running nftables [add element inet CRIU-eb7e4834-c3cf-4b92-ac conns4 { ... }]"
  std::ifstream in(dump_log);
  std::string line;
  constexpr std::string_view kMark = "inet CRIU-";
  while (std::getline(in, line)) {
    if (line.find("Running nftables") == std::string::npos) continue;
    size_t at = line.find(kMark);
    if (at == std::string::npos) continue;
    size_t end = line.find_first_of(" ]", at + kMark.size());
    return line.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  return "";
}

Status Unlock(const std::string& table) {
  const size_t space = table.find(' ');
  if (space == std::string::npos)
    return InvalidArgumentError("not an nftables table: '" + table + "'");
  std::string family = table.substr(0, space), name = table.substr(space + 1);
  const std::string by_hand = fmt::format("run `nft delete table {}` as root", table);
  // nft's output is not ours.
  subprocess::Command nft;
  nft.argv = {"nft", "delete", "table", family, name};
  Result<subprocess::Exit> exit = subprocess::Run(nft);
  if (!exit.has_value())
    return Status(exit.error().code(), "running nft: " + exit.error().message() + " (" + by_hand +
                                           "; nft is in Debian's nftables package)");
  if (!exit->ok())
    return UnavailableError(fmt::format("nft could not delete CRIU's network lock {}: it {} ({})",
                                        table, exit->Describe(), by_hand));
  return OkStatus();
}

Result<int> EndRepairMode(pid_t root) {
  CEDANA_ASSIGN_OR_RETURN(std::vector<pid_t> tree, ProcessTreeOf(root));
  int changed = 0;
  for (pid_t pid : tree) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (pidfd.get() < 0) continue;  // gone meanwhile
    Result<std::vector<std::string>> fds = fs::ListDir(fmt::format("/proc/{}/fd", pid));
    if (!fds.has_value()) continue;
    for (const std::string& name : *fds) {
      UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), std::stoi(name), 0)));
      if (fd.get() < 0) continue;
      int protocol = 0, repair = 0;
      socklen_t len = sizeof protocol;
      if (::getsockopt(fd.get(), SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 ||
          protocol != IPPROTO_TCP)
        continue;
      len = sizeof repair;
      if (::getsockopt(fd.get(), SOL_TCP, TCP_REPAIR, &repair, &len) != 0 || repair == 0) continue;
      int off = 0;  // TCP_REPAIR_OFF: the socket sends again (a window probe first)
      if (::setsockopt(fd.get(), SOL_TCP, TCP_REPAIR, &off, sizeof off) != 0)
        return ErrnoStatus(errno,
                           fmt::format("taking a TCP socket of pid {} out of repair mode", pid));
      ++changed;
    }
  }
  return changed;
}

Status UndoLeftLock(const std::string& dump_log, pid_t continued_root) {
  const std::string table = LockTableInLog(dump_log);
  if (table.empty()) return OkStatus();
  if (continued_root > 0) {
    Result<int> ended = EndRepairMode(continued_root);
    if (!ended.has_value()) return ended.error();
  }
  return Unlock(table);
}

}  // namespace cedana::engine
