// NodeContext: what every request handler of the node daemon shares: the frozen config, the seams
// to the system (CRIU, the processes, the supervisor), the cluster key, the workload records, the
// connection caps and the dump queue. Built once in daemon start-up (unit tests build one with
// fakes in temporary dirs), then read-only apart from the locks, caps and queue. Thread-safe.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "common/config.h"
#include "common/system_names.h"
#include "daemon/connection_limits.h"
#include "daemon/dump_queue.h"
#include "daemon/job_steps.h"
#include "daemon/node_metrics.h"
#include "daemon/slurm_job_registry.h"
#include "daemon/workload.h"
#include "daemon/workload_launcher.h"
#include "engine/checkpoint_engine.h"
#include "engine/process_control.h"
#include "storage/checkpoint_store.h"

namespace cedana::daemon {

// Who is asking, from SO_PEERCRED of the connection.
struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  bool IsRoot() const { return uid == 0; }
};

// The parts of a node that act on the system: real in the daemon, fakes in unit tests.
struct NodeSeams {
  std::unique_ptr<const engine::CheckpointEngine> engine;  // CRIU (engine::CriuClient)
  std::unique_ptr<engine::ProcessControl> processes;       // engine::HostProcesses
  std::unique_ptr<const WorkloadLauncher> launcher;        // SupervisorLauncher
  // The store at a checkpoint dir or bucket URL (storage::OpenStore).
  std::function<Result<std::unique_ptr<storage::CheckpointStore>>(const std::string& location)>
      open_store;
};

class NodeContext {
 public:
  NodeContext(Config config, NodeSeams seams, std::string cluster_key, std::string hostname,
              std::string criu_version);

  const Config& config() const { return config_; }
  const engine::CheckpointEngine& engine() const { return *seams_.engine; }
  engine::ProcessControl& processes() const { return *seams_.processes; }
  const WorkloadLauncher& launcher() const { return *seams_.launcher; }
  const std::string& cluster_key() const { return cluster_key_; }
  const std::string& hostname() const { return hostname_; }
  const std::string& criu_version() const { return criu_version_; }
  const WorkloadRecords& records() const { return records_; }
  const SlurmJobRegistry& slurm_jobs() const { return slurm_jobs_; }
  // The srun steps of the node's SLURM workloads (daemon/srun_steps.h).
  JobSteps& steps() { return steps_; }
  // The connections being served (server.cc admits them), and the dumps running and waiting.
  ConnectionLimits& connection_limits() { return connection_limits_; }
  DumpQueue& dump_queue() { return dump_queue_; }
  // What this daemon did since it started, for its metrics port (daemon/node_metrics.h).
  NodeMetrics& metrics() const { return metrics_; }

  // The store named by `dir`, or the configured checkpoint dir when empty.
  Result<std::unique_ptr<storage::CheckpointStore>> OpenStore(const std::string& dir) const;
  // Unprivileged mode (slurm.unprivileged): CRIU runs as a non-root workload's owner, that
  // owner's workloads live in the node's PID namespace (a non-root CRIU cannot restore a PID
  // namespace), and checkpoint files are read and written with the owner's file-system identity
  // (root_squash NFS). Root's own workloads stay privileged.
  bool RunsAsOwner(uid_t owner) const { return config_.node.slurm_unprivileged && owner != 0; }
  // The identity CRIU takes for a workload of `owner`; empty when CRIU runs as root.
  std::optional<engine::RunAs> CriuIdentityFor(uid_t owner, gid_t gid) const;
  // The uid/gid whose file-system identity checkpoint files of `owner` are accessed with
  // (AsFileUser): the owner in unprivileged mode, else root (0, 0).
  std::pair<uid_t, gid_t> StoreIdentityFor(uid_t owner, gid_t gid) const;
  // One dump or restore at a time per workload.
  std::unique_lock<std::mutex> LockWorkload(const std::string& id);
  // Images dirs (names in the work dir) of the dumps and restores in progress: the work dir's
  // sweep (daemon/recovery.h) removes every other one. Claim before creating the dir.
  void ClaimWorkDir(const std::string& name);
  bool WorkDirClaimed(const std::string& name) const;
  // The dump or restore is done with its images dir: the claim ends and the dir goes. With a
  // remover registered (the housekeeper) that happens on its thread, after the reply: unlinking
  // 1 GiB of images takes 0.05-0.07 s here, on every dump and on every restore that unpacked
  // pages. Without one, here and now.
  void RetireWorkDir(const std::string& name);
  // Whether `name` was retired and not yet removed (the sweep learns it from WorkDirRemoved).
  bool WorkDirRetired(const std::string& name) const;
  // Called when the work dir holds a retired dir; cleared (empty) before the remover goes.
  void SetWorkDirRemover(std::function<void()> wake);
  // The sweep removed `name`: whether it had been retired (else it was left over).
  bool WorkDirRemoved(const std::string& name);

 private:
  const Config config_;
  const NodeSeams seams_;
  const std::string cluster_key_;
  const std::string hostname_;
  const std::string criu_version_;
  const WorkloadRecords records_;
  const SlurmJobRegistry slurm_jobs_;
  JobSteps steps_;
  ConnectionLimits connection_limits_;
  DumpQueue dump_queue_;
  mutable NodeMetrics metrics_;
  std::mutex locks_mu_;
  std::map<std::string, std::unique_ptr<std::mutex>> locks_;
  mutable std::mutex work_dirs_mu_;
  std::set<std::string> work_dirs_;          // claimed; guarded by work_dirs_mu_
  std::set<std::string> retired_work_dirs_;  // guarded by work_dirs_mu_
  std::function<void()> work_dir_remover_;   // guarded by work_dirs_mu_
};

// kPermissionDenied unless the caller is root or `owner`.
Status CheckOwner(const Caller& caller, uid_t owner, const std::string& what);

}  // namespace cedana::daemon
