// JobSteps: the srun steps of this node's SLURM workloads, as the node daemon runs them for the
// relays in their batch scripts (docs/architecture.md, "srun steps"). A step is named when its
// relay asks for it; its tasks' keepers join it as their task proxies ask; a checkpoint of the
// workload asks whether every step can go into it, and which. In memory only: a daemon restarted
// while a step runs does not know it, and refuses the job's checkpoints until it ends
// (CheckStepsKnown). Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cedana::daemon {

// A task of a step, run by a keeper inside the workload. Its output and status pipes: the
// inodes it was started with, and where they are in the keeper (a shell moves a descriptor it
// redirects for the command it runs: the status pipe sits at 10 while the task runs).
struct StepKeeper {
  pid_t pid = 0;                      // node pid
  uint64_t pipe_inos[3] = {0, 0, 0};  // stdout, stderr, status
  int pipe_fds[3] = {1, 2, 3};
};

struct JobStep {
  std::string name;         // "st-3f9a0c12": CEDANA_STEP in its tasks' environment
  std::string workload_id;  // the batch script's workload
  pid_t relay_pid = 0;      // the relay in the workload (node pid), later the waiter it execs
  pid_t srun_pid = 0;       // the shell that runs the real srun and writes its exit status
  // Owned by the registry; readable once that shell has ended (-1: it had ended already).
  int srun_pidfd = -1;
  std::vector<std::string> argv, env;  // srun's, as the relay gave them (argv[0] "srun")
  std::string cwd;
  // Why its tasks run as without cedana and the workload cannot be checkpointed while it runs
  // ("" = its tasks run in keepers inside the workload).
  std::string not_captured;
  // Its tasks on this node (from SLURM_STEP_TASKS_PER_NODE), from its first task here; 0 = none
  // arrived yet.
  int expected_tasks = 0;
  int all_tasks = 0;      // SLURM_STEP_NUM_TASKS: on every node
  int nodes = 1;          // SLURM_STEP_NUM_NODES
  std::string node_list;  // SLURM_STEP_NODELIST ("compute-[01-02]")
  std::string node_name;  // this node's name in it (SLURMD_NODENAME)
  // The name of the step it resumes, over every restore (the first run's `name`): its tasks on
  // other nodes are workloads labelled after it (daemon/step_parts.h).
  std::string lineage;
  // A resumed step's tasks on other nodes, as its new srun tells them (kStepPartsVar).
  std::string parts;
  std::map<int, StepKeeper> keepers;  // by rank
  // Restored from a checkpoint: its keepers were restored with the workload, and its tasks'
  // proxies attach to them instead of starting new ones.
  bool restored = false;
};

// How many tasks of a step run on its node number `node_index` (SLURM_NODEID), from
// SLURM_STEP_TASKS_PER_NODE ("2(x3),1": two on each of the first three nodes, one on the fourth);
// 0 when the text says nothing of that node.
int TasksOnNode(std::string_view per_node, int node_index);

class JobSteps {
 public:
  JobSteps() = default;
  ~JobSteps();
  JobSteps(const JobSteps&) = delete;
  JobSteps& operator=(const JobSteps&) = delete;

  // A request about `workload_id`'s steps begins. kAborted while a checkpoint of it is being
  // taken (the caller retries: a relay must not hold its socket to us while CRIU dumps it).
  Status Begin(const std::string& workload_id);
  void End(const std::string& workload_id);

  // Adds the step (takes its srun_pidfd).
  void Add(JobStep step);
  std::optional<JobStep> Find(const std::string& name) const;
  // Marks the step as one whose tasks run outside the workload, saying why.
  void NotCaptured(const std::string& name, const std::string& why);
  // `placement`: where the step's tasks run, from the task's environment (its
  // expected_tasks, nodes, node_list and node_name are taken).
  void AddKeeper(const std::string& name, int rank, const StepKeeper& keeper,
                 const JobStep& placement);
  // A restored step's task attached: where the step's tasks run now (the nodes may be others).
  void Place(const std::string& name, const JobStep& placement);

  // Waits up to `wait` until every running step of the workload has all its keepers and no
  // request about it is in flight, then holds new requests off (Begin) until CheckpointDone.
  // kUnsupported, saying why, when a running step cannot be checkpointed at all (srun --mpi);
  // kUnavailable when steps were still starting at the end of `wait`.
  // `relay_settled` says whether a relay's process has become the waiter (a relay still holds
  // its socket to us).
  Status HoldForCheckpoint(const std::string& workload_id, std::chrono::milliseconds wait,
                           const std::function<bool(pid_t relay)>& relay_settled);
  void CheckpointDone(const std::string& workload_id);
  // The workload's steps whose srun has not ended.
  std::vector<JobStep> Running(const std::string& workload_id) const;
  // Forgets the steps of a workload that ended.
  void Forget(const std::string& workload_id);

 private:
  struct PerWorkload {
    int in_flight = 0;
    bool checkpointing = false;
  };
  bool Ended(const JobStep& s) const;
  static void PlaceLocked(JobStep* s, const JobStep& placement);
  // Why the running steps of `workload_id` cannot be checkpointed now; "" when they can.
  std::string Unsettled(const std::string& workload_id,
                        const std::function<bool(pid_t relay)>& relay_settled, bool* never) const;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, JobStep> steps_;  // by name
  std::map<std::string, PerWorkload> workloads_;
};

}  // namespace cedana::daemon
