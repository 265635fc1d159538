// CRIU's network lock, where CRIU leaves it on. To checkpoint connected TCP sockets CRIU puts
// them in repair mode and drops their packets while it dumps (an nftables table named after its
// run). It undoes both itself when the tree runs on after the dump, and a restore on the same
// node lifts the lock; but a tree CRIU leaves stopped keeps its sockets in repair mode and its
// connections locked. So a dump rolled back after CRIU succeeded undoes both here before the
// tree is continued, and one whose tree is killed with no peer outside the tree to keep the
// connections for lifts the lock.
#pragma once

#include <string>

#include "common/result.h"

namespace cedana::engine {

// The nftables table ("inet CRIU-...") a dump's CRIU log shows it locking connections with;
// "" when it locked none.
std::string LockTableInLog(const std::string& dump_log);

// Deletes `table` (as LockTableInLog names it) with `nft`. kUnavailable when nft cannot be run,
// naming the command to run by hand.
Status Unlock(const std::string& table);

// Takes every TCP socket of the (stopped) tree rooted at `root` out of repair mode, through a
// copy of its descriptor (pidfd_getfd; root's right). Returns how many it changed.
Result<int> EndRepairMode(pid_t root);

// What a dump whose CRIU log is `dump_log` left locked, undone: the sockets of `continued_root`
// (a tree about to be continued; 0 for none) out of repair mode, then the lock lifted. Nothing
// when CRIU locked nothing.
Status UndoLeftLock(const std::string& dump_log, pid_t continued_root);

}  // namespace cedana::engine
