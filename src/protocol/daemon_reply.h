// The node daemon's replies, typed: one struct per reply, one encoder and one parser each. The
// daemon's handlers encode them; the CLI, the job proxy and the task plugin parse them, so no
// client spells a key again. Parsers take what an ok result carries (wire.h) and refuse a
// field of the wrong type with kInvalidArgument naming it; a field that is missing keeps its
// default, so a client reads a reply from an older daemon. Value types; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/phase_durations.h"
#include "common/result.h"
#include "protocol/wire.h"

namespace cedana::protocol {

// What the node's site allows a job proxy at its job's time limit (docs/slurm.md, "Time
// limits"), from the daemon's config, which a job's environment cannot change.
struct TimeLimitGrant {
  bool requeue = false;
  int max_restarts = 0;
  int margin_seconds = 0;
  bool operator==(const TimeLimitGrant&) const = default;
};

// A checkpoint, as a dump's reply and the checkpoints list give it.
struct CheckpointSummary {
  std::string id;
  std::string label;
  std::string owner;
  uint32_t owner_uid = 0;
  int64_t created_at_ms = 0;
  int64_t duration_ms = 0;  // how long the checkpoint took to make
  std::string reason;       // common/checkpoint_reason.h; "" for older checkpoints
  uint32_t restart_count = 0;
  int64_t frozen_ms = 0;
  uint64_t stored_bytes = 0;
  uint64_t images_bytes = 0;
  std::string codec;
  int streams = 0;
  int raw_streams = 0;  // of them, stored uncompressed: their memory did not compress
  std::string node;
  std::string job_id;
  std::string workload_id;
  std::string location;  // dump: "<store>/<owner>/<label>/<id>"
  std::string state;     // list: "good" or "unverified" (its MAC)
  std::string run;       // list: "open", or "finished" (its run ended by itself)
  // dump: how long each of its steps took, in order (daemon/dump_job.h, DumpOutcome).
  PhaseDurations phases_ms;
  bool operator==(const CheckpointSummary&) const = default;
};

// A workload that runs now: the reply of run and of restore.
struct StartedWorkload {
  std::string id;
  pid_t pid = 0;
  std::string label;
  std::string stdout_path;
  // Restored: the checkpoint it resumed from ("" when it started fresh), and about it.
  std::string checkpoint_id;
  int64_t checkpoint_created_at_ms = 0;
  int64_t checkpoint_duration_ms = 0;
  std::string checkpoint_reason;
  std::vector<std::string> skipped;  // "<id>: <why>" for each checkpoint passed over
  // run with restore_label that started fresh: the label's run had finished, or no checkpoint
  // of it could be restored (why).
  std::string fresh_reason;
  std::string restore_error;
  std::optional<TimeLimitGrant> time_limit;  // run only
  // restore: how long each of its steps took, in order (daemon/restore_job.h, RestoreOutcome).
  PhaseDurations phases_ms;
  bool operator==(const StartedWorkload&) const = default;
};

struct CheckpointList {
  std::vector<CheckpointSummary> checkpoints;
  std::string dir;  // the store's description
  bool operator==(const CheckpointList&) const = default;
};

// slurm_job_start: slurmd's registration of a batch job, acknowledged.
struct SlurmJobRegistered {
  std::string job_id;
  uint32_t uid = 0;
  bool operator==(const SlurmJobRegistered&) const = default;
};

// A managed workload, as ps lists it and inspect shows it. Only `id` is set when its records
// cannot be read.
struct WorkloadInfo {
  std::string id;
  std::string label;
  std::string status;  // "starting", "running", "exited", "failed", "checkpointed"
  pid_t pid = 0;
  uint32_t uid = 0;
  std::string user;
  std::vector<std::string> argv;
  int exit_code = -1;  // exited: its status, or 128+signal
  std::string error;   // failed: why
  int64_t started_at_ms = 0;
  std::string stdout_path;
  std::string restored_from;  // the checkpoint it was restored from, if it was
  std::string job_id;
  bool operator==(const WorkloadInfo&) const = default;
};

struct WorkloadList {
  std::vector<WorkloadInfo> workloads;
  bool operator==(const WorkloadList&) const = default;
};

// ping: the daemon and the CRIU it drives.
struct DaemonInfo {
  std::string version;
  std::string criu;  // the binary's path
  std::string criu_version;
  bool no_breakpoints = false;
  std::string checkpoint_dir;
  bool operator==(const DaemonInfo&) const = default;
};

// kill: the signal sent.
struct Signalled {
  std::string id;
  int signal = 0;
  bool operator==(const Signalled&) const = default;
};

// checkpoints_delete: the checkpoint deleted.
struct Deleted {
  std::string checkpoint_id;
  bool operator==(const Deleted&) const = default;
};

Message EncodeReply(const CheckpointSummary& reply);  // the dump reply: {"checkpoint": {...}}
Message EncodeReply(const StartedWorkload& reply);
Message EncodeReply(const CheckpointList& reply);
Message EncodeReply(const SlurmJobRegistered& reply);
Message EncodeReply(const WorkloadInfo& reply);  // the inspect reply: {"workload": {...}}
Message EncodeReply(const WorkloadList& reply);
Message EncodeReply(const DaemonInfo& reply);
Message EncodeReply(const Signalled& reply);
Message EncodeReply(const Deleted& reply);

Result<CheckpointSummary> ParseDumpReply(const Message& reply);
Result<StartedWorkload> ParseStartedWorkload(const Message& reply);
Result<CheckpointList> ParseCheckpointList(const Message& reply);
Result<SlurmJobRegistered> ParseSlurmJobRegistered(const Message& reply);
Result<WorkloadInfo> ParseInspectReply(const Message& reply);
Result<WorkloadList> ParseWorkloadList(const Message& reply);
Result<DaemonInfo> ParseDaemonInfo(const Message& reply);
Result<Signalled> ParseSignalled(const Message& reply);
Result<Deleted> ParseDeleted(const Message& reply);

}  // namespace cedana::protocol
