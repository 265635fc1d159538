// srun steps of a SLURM workload (docs/architecture.md, "srun steps"): what the node daemon does
// for the srun relay in a batch script and for the task proxies of the steps it starts, what a
// checkpoint records of the steps, and how a restore starts them again.
//
// - `srun` in an enabled batch script is the relay (cedana-slurm): HandleSrun runs the real srun
//   outside the workload, with the relay's stdio, identity, cwd, limits and cgroups, through a
//   shell that writes srun's exit status into the relay's status pipe. The relay then becomes a
//   waiter (/bin/sh reading that pipe), which holds nothing a checkpoint cannot include.
// - Each task of such a step is a task proxy (spank/cedana makes it one): HandleStepTask starts
//   the task's command in a keeper (/bin/sh that runs it and writes its exit status) inside the
//   workload's PID and IPC namespaces, as a child of the workload's init, with pipes the proxy
//   relays. So a checkpoint of the workload's tree is one dump of the script, its waiters, and
//   every step's tasks, frozen together.
// - DescribeSteps records, per running step, what a restore needs: srun's arguments and the
//   namespace pids and pipe inodes of its waiter and keepers. ResumeSteps, once the tree is
//   restored, starts a new srun for each step with the restored waiter's stdio; its task
//   proxies attach to the restored keepers' pipes (through /proc/<keeper>/fd).
// - A step's tasks on other nodes than the batch script's run as workloads of their own there
//   (HandleStepTask answers "workload"); daemon/step_parts.h puts them into the job's checkpoint.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "daemon/node_context.h"
#include "daemon/workload.h"
#include "protocol/daemon_request.h"
#include "protocol/wire.h"

namespace cedana::daemon {

// The directory whose `srun` is the relay (installed beside cedana: ../libexec/cedana, a link to
// cedana-slurm). kNotFound, naming it, when this installation has none: batch scripts then run
// the real srun, and a checkpoint while one is inside srun is refused.
Result<std::string> SrunRelayDir();

// Puts the relay first in a SLURM workload's PATH (its batch script's).
void AddSrunRelay(const std::string& relay_dir, std::vector<std::string>* env);

// srun's environment: the relay's (with AddSrunRelay's changes), with the relay out of PATH
// again, so that steps see the PATH they see without cedana, plus `extra` (KEY=VALUE). A relay
// restored into a later run of its job (a requeue, or the job resubmitted after a scancel) still
// has the first run's SLURM_* variables, and srun would look for that run's allocation ("Slurm job
// 6 has expired"): `job_now`, the job's environment in this run, replaces each SLURM_* variable
// it has ({} for a relay of this run).
std::vector<std::string> SrunEnvironment(const std::vector<std::string>& relay_env,
                                         const std::vector<std::string>& extra,
                                         const std::vector<std::string>& job_now = {});

Result<protocol::Message> HandleSrun(NodeContext& node, const Caller& caller,
                                     const protocol::DaemonRequest& req);
Result<protocol::Message> HandleStepTask(NodeContext& node, const Caller& caller,
                                         const protocol::DaemonRequest& req);

// Before a checkpoint of the workload whose init is `init`: waits up to 10 s until none of its
// steps is starting, then holds new step requests off until JobSteps::CheckpointDone
// (JobSteps::HoldForCheckpoint). kUnsupported, saying why, for a step no checkpoint can include:
// srun --mpi, or a waiting relay this daemon does not know (it started
// before the daemon restarted, and its srun could not be started again after a restore).
Status HoldStepsForCheckpoint(NodeContext& node, const std::string& workload_id, pid_t init);

// Under the workload's dump lock, with new step requests held off (JobSteps::HoldForCheckpoint):
// the running steps of the workload as a checkpoint records them (the manifest's
// workload.steps). An empty array when it has none.
nlohmann::json DescribeSteps(NodeContext& node, const std::string& workload_id);

// A checkpoint stopped the workload: its steps' sruns are killed (their tasks end with the tree)
// and forgotten.
void StopSteps(NodeContext& node, const std::string& workload_id);

// The pipes a restore of `steps` (DescribeSteps) gives CRIU in place of the dumped ones.
std::vector<StepPipe> StepPipesOf(const nlohmann::json& steps);

// After `spec`'s tree was restored with init `init_pid`: a new srun for each step in `steps`,
// whose tasks attach to the restored keepers. Problems are logged; a step whose srun cannot be
// started ends with status 1 in the batch script (which then sees its srun fail).
void ResumeSteps(NodeContext& node, const WorkloadSpec& spec, pid_t init_pid,
                 const nlohmann::json& steps);

}  // namespace cedana::daemon
