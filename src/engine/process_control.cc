#include "engine/process_control.h"

#include "engine/network_lock.h"
#include "engine/process_tree.h"

namespace cedana::engine {

int HostProcesses::SignalTree(pid_t root, int sig) { return engine::SignalTree(root, sig); }

bool HostProcesses::WaitUntilGone(pid_t pid, std::chrono::milliseconds timeout) {
  return engine::WaitUntilGone(pid, timeout);
}

uint64_t HostProcesses::StartTime(pid_t pid) { return ProcessStartTime(pid); }

bool HostProcesses::Traced(pid_t pid) { return StatusNumber(pid, "TracerPid").value_or(0) != 0; }

uint64_t HostProcesses::ResidentBytes(pid_t root) { return TreeResidentBytes(root); }

Result<TreeTcp> HostProcesses::ReadTcp(pid_t root) { return ReadTreeTcp(root); }

Status HostProcesses::UndoNetworkLock(const std::string& dump_log, pid_t continued_root) {
  return UndoLeftLock(dump_log, continued_root);
}

}  // namespace cedana::engine
