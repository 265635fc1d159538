// DaemonRequest: the typed, validated form of one request to the node daemon (wire.h). The
// daemon turns every request message into one before it acts on it, so a field of the wrong
// JSON type, an out-of-range number, a bad label or job id, or a NUL byte inside a string is
// refused here, with kInvalidArgument naming the field, and never reaches a handler. Parsing
// has no side effects (no file, process or socket is touched), which is also what lets the
// fuzzer (tests/fuzz/) drive it. Value type; ParseDaemonRequest is thread-safe.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "protocol/wire.h"

namespace cedana::protocol {

enum class DaemonOp {
  kPing,
  kRun,
  kPs,
  kKill,
  kInspect,
  kDump,
  kRestore,
  kCheckpoints,
  kCheckpointsDelete,
  kSlurmJobStart,
  kSrun,
  kStepTask,
};

// The op's name on the wire ("checkpoints_delete").
std::string_view DaemonOpName(DaemonOp op);

// Every field any op reads. A field an op does not read keeps its default; a string field
// that was not given is "". Fields are checked for their type whichever op they come with.
struct DaemonRequest {
  DaemonOp op = DaemonOp::kPing;
  // Workload id (kill, inspect, dump).
  std::string id;
  // Checkpoint label: valid per ValidateLabel, or "" when not given (run then names the
  // workload after its id; dump picks one; restore and checkpoints do not filter by label).
  std::string label;
  // SLURM job id (run, restore): valid per ValidateJobId, or "".
  std::string job_id;
  // Checkpoint dir (dump, restore, checkpoints, checkpoints_delete); "" = the configured one.
  std::string dir;
  // Checkpoint id (restore, checkpoints_delete).
  std::string checkpoint_id;
  // run: the command, its environment (KEY=VALUE) and working directory.
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd = "/";
  // run, restore: where the workload's output goes; "" = the daemon picks (stderr: stdout's).
  std::string stdout_path;
  std::string stderr_path;
  // run: restore the newest good checkpoint of `label` first, if there is one.
  bool restore_label = false;
  // run: the job proxy whose cgroups the workload joins; 0 = none.
  pid_t owner_pid = 0;
  // run: slurmd's copy of the batch script, kept with the checkpoint; "" = none.
  std::string slurm_script;
  // dump: the process tree to dump when no workload id is given; 0 = none.
  pid_t pid = 0;
  // dump: leave the tree running after the dump.
  bool leave_running = false;
  // dump: codec name, "" = the configured one (checked by the dump against the codec list).
  std::string compression;
  // dump: 1..64 streams, 0 = the configured number.
  int streams = 0;
  // dump: refuse|established|close for TCP connections to peers outside the tree, "" = the
  // configured checkpoint.tcp (checked by the dump).
  std::string tcp;
  // dump: why it is taken (common/checkpoint_reason.h); "" = manual.
  std::string reason;
  // dump: unix ms by which SLURM ends the job (the end of its grace time), which orders the
  // node's waiting dumps (daemon/dump_queue.h); 0 = none.
  int64_t deadline_ms = 0;
  // kill: the signal sent, 1..64. Default SIGKILL.
  int signal_number = SIGKILL;
  // slurm_job_start: the job's owner as slurmd says.
  uid_t uid = 0;
  // srun, step_task: descriptors of the caller the daemon takes copies of (pidfd_getfd). srun:
  // the status pipe's write end (the relay's stdin, stdout and stderr are 0, 1 and 2). step_task:
  // the ends its task gets as stdin (-1: /dev/null), stdout, stderr and status.
  std::vector<int> caller_fds;
  // step_task: the step a task belongs to, as the daemon named it for its srun
  // (CEDANA_STEP in the task's environment), and the task's rank in it (SLURM_PROCID).
  std::string step;
  int task = 0;

  bool operator==(const DaemonRequest&) const = default;
};

// A request of `op` about workload `id` ("" = none), every other field at its default.
inline DaemonRequest RequestOf(DaemonOp op, std::string id = "") {
  DaemonRequest r;
  r.op = op;
  r.id = std::move(id);
  return r;
}

// Parses and validates `message` as a request of protocol version kVersion. kInvalidArgument
// naming the field for anything malformed: a missing or other "v" (naming both versions), an
// unknown "op" (naming the valid ones), a field of the wrong type or out of range. Never
// throws on any message.
Result<DaemonRequest> ParseDaemonRequest(const Message& message);

// The message a client sends for `request` ("v" is added by CallDaemon): its op and every
// field that differs from its default, so that ParseDaemonRequest gives `request` back. The one
// encoder of requests: clients fill a DaemonRequest rather than spell the keys again.
Message EncodeDaemonRequest(const DaemonRequest& request);

// The "op" of a message as text for logs, "" when absent or not a string. Never throws.
std::string RequestOpName(const Message& message);

}  // namespace cedana::protocol
