// DumpJournal: one record per dump in progress (<state_dir>/dumps/<checkpoint id>.json), written
// before CRIU starts and removed when the dump has finished or rolled back. It holds what a
// daemon that was killed part-way needs to put things back (daemon/recovery.h): which tree (its
// pid and the pid's start time, so that a reused pid is never signalled), which checkpoint, and
// whether the dump was to stop the tree. Thread-safe (files replaced atomically).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::daemon {

struct DumpIntent {
  std::string checkpoint_id;
  std::string owner;  // user name: with label and id, the checkpoint's place in the store
  std::string label;
  std::string workload_id;  // "" for a --pid dump
  pid_t pid = 0;
  uint64_t pid_start = 0;  // engine::ProcessStartTime
  uid_t uid = 0;
  gid_t gid = 0;
  bool leave_running = false;
};

class DumpJournal {
 public:
  explicit DumpJournal(std::string state_dir);
  Status Begin(const DumpIntent& intent) const;
  void End(const std::string& checkpoint_id) const;
  // Every dump a daemon began and did not end; unreadable records are skipped with a warning.
  Result<std::vector<DumpIntent>> Pending() const;

 private:
  std::string dir_;
};

}  // namespace cedana::daemon
