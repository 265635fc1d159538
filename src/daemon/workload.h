// Workload: a process tree the node daemon manages, recorded in <state_dir>/workloads/<id>/.
//   spec.json   what to run or restore (written by the daemon before the supervisor starts)
//   state.json  what the supervisor reports (status, host pid, exit) - owned by the supervisor
//   end.json    why the daemon ended it (a checkpoint that stopped it) - owned by the daemon
//   notice.json what its job's owner should know: its last checkpoint failed or was refused,
//               or it started fresh although its label had checkpoints - owned by the daemon
//   output.log  the workload's stdout/stderr, unless the spec names other files
// The records outlive the daemon, so a restarted daemon finds every running workload again.
// WorkloadRecords is thread-safe (it only reads and atomically replaces files).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/label.h"
#include "common/named_values.h"
#include "common/result.h"

namespace cedana::daemon {

// What the supervisor does with a workload: exec its argv, or restore it with CRIU from its
// images dir. Its word is in the workload's spec.json.
enum class WorkloadMode { kRun, kRestore };
inline constexpr NamedValue<WorkloadMode> kWorkloadModeNames[] = {
    {"run", WorkloadMode::kRun}, {"restore", WorkloadMode::kRestore}};

// A pipe of a restored srun step (daemon/srun_steps.h) whose other end was outside the tree: the
// supervisor gives CRIU a new pipe for it and keeps the outer end, so that the restored step
// neither reads end-of-file nor writes into a pipe without a reader before its new task proxies
// attach.
struct StepPipe {
  uint64_t ino = 0;         // the dumped pipe's inode (CRIU's inherit-fd key)
  bool tree_reads = false;  // the tree holds its read end (else its write end)
  bool operator==(const StepPipe&) const = default;
};

struct WorkloadSpec {
  std::string id;
  std::string label;
  WorkloadMode mode = WorkloadMode::kRun;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // KEY=VALUE
  std::string cwd = "/";
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string stdout_path;      // appended to
  std::string stderr_path;      // appended to; may equal stdout_path
  std::string job_id;           // SLURM job id, if any
  uint32_t restart_count = 0;   // the SLURM job's restarts (SLURM_RESTART_COUNT) at this run
  pid_t owner_pid = 0;          // the SLURM job proxy: when it dies the workload is killed
  std::string slurm_script;     // the batch script bash reads as it runs (kept with checkpoints)
  std::string mpi_scratch_dir;  // OpenMPI's files (daemon/mpi_scratch.h); "" = none
  int64_t created_at_ms = 0;
  // restore mode
  std::string images_dir;
  std::string restored_from;       // checkpoint id
  uint64_t dumped_stdout_ino = 0;  // pipe inodes in the images (CRIU inherit-fd keys)
  uint64_t dumped_stderr_ino = 0;
  std::string restore_tcp;  // "", "established", "close": as the dump (tcp_policy.h)
  std::vector<StepPipe> step_pipes;
  // CRIU settings resolved by the daemon
  std::string criu_binary;
  int criu_timeout_seconds = 120;
  bool criu_no_breakpoints = false;
  // Unprivileged mode (NodeContext::RunsAsOwner): the workload starts in the node's PID namespace
  // and CRIU restores it as its owner.
  bool unprivileged = false;
  // Restore mode: CRIU reads the images through the daemon's image server as they are unpacked
  // (criu restore --stream) and leaves the tree stopped; the daemon continues it once every
  // stream is verified.
  bool direct_restore = false;
};

enum class WorkloadStatus { kStarting, kRunning, kExited, kFailed };

struct WorkloadState {
  WorkloadStatus status = WorkloadStatus::kStarting;
  pid_t pid = 0;  // host pid of the workload's init
  pid_t supervisor_pid = 0;
  uint64_t stdout_ino = 0;  // inodes of the pipes the workload writes to now
  uint64_t stderr_ino = 0;
  int exit_code = -1;  // exit status, or 128+signal
  int signal = 0;
  std::string error;  // why it failed to start
  int64_t started_at_ms = 0;
  int64_t ended_at_ms = 0;
  // Its program exited (any status), not killed and not stopped by a checkpoint, nor ended by
  // its owner's end or a kill request: the run is finished (image/lineage.h).
  bool ended_by_itself = false;
};

// Why the daemon ended a workload.
struct WorkloadEnd {
  std::string checkpoint_id;  // the dump that stopped it
};

// What went wrong for a workload's job, for the jobs list (the job's stderr says it too).
struct WorkloadNotice {
  std::string text;  // "checkpoint on preemption refused: ..."
  int64_t at_ms = 0;
};

std::string StatusName(WorkloadStatus s);

nlohmann::json SpecToJson(const WorkloadSpec& spec);
Result<WorkloadSpec> SpecFromJson(const nlohmann::json& j);
nlohmann::json StateToJson(const WorkloadState& state);
Result<WorkloadState> StateFromJson(const nlohmann::json& j);

class WorkloadRecords {
 public:
  explicit WorkloadRecords(std::string state_dir);

  std::string DirOf(const std::string& id) const;
  // Makes the dir and writes spec.json (a restore's: fs::Durability::kUntilCrash).
  Status Create(const WorkloadSpec& spec,
                fs::Durability durability = fs::Durability::kOnDisk) const;
  Result<WorkloadSpec> LoadSpec(const std::string& id) const;
  Result<WorkloadState> LoadState(const std::string& id) const;
  Status SaveState(const std::string& id, const WorkloadState& state) const;
  std::optional<WorkloadEnd> LoadEnd(const std::string& id) const;
  Status SaveEnd(const std::string& id, const WorkloadEnd& end) const;
  std::optional<WorkloadNotice> LoadNotice(const std::string& id) const;
  Status SaveNotice(const std::string& id, const WorkloadNotice& notice) const;
  Status Remove(const std::string& id) const;
  // A dump is in progress: the supervisor must not kill the workload when its owner dies.
  std::string DumpingMarker(const std::string& id) const { return DirOf(id) + "/dumping"; }
  // A kill was asked for (`cedana kill`): however the workload then exits, it did not end by
  // itself.
  std::string KillMarker(const std::string& id) const { return DirOf(id) + "/kill-requested"; }
  // A direct restore's tree is stopped until every stream is verified; a daemon that finds
  // this marker at start must kill the tree, never continue it (daemon/recovery.h).
  std::string VerifyingMarker(const std::string& id) const { return DirOf(id) + "/verifying"; }
  // Its end is settled for its lineage: recorded in the store, or it ended from outside
  // (daemon/lineage_recorder.h).
  std::string LineageMarker(const std::string& id) const { return DirOf(id) + "/lineage-recorded"; }
  // Ids of all recorded workloads, oldest first.
  Result<std::vector<std::string>> List() const;
  // The running workloads of SLURM job `job_id` on this node, oldest first: its batch script's,
  // or its tasks of steps over several nodes (daemon/step_parts.h).
  Result<std::vector<WorkloadSpec>> RunningOfJob(const std::string& job_id) const;

 private:
  std::string root_;  // <state_dir>/workloads
};

// A fresh random id with a prefix: "wl-3f9a0c12".
std::string NewId(const std::string& prefix);
int64_t NowMs();

}  // namespace cedana::daemon
