// Steps over several nodes (docs/architecture.md, "Steps over several nodes"). On the batch
// script's node a step's tasks are keepers in the job's tree (daemon/srun_steps.h). On every
// other node each task runs as a workload of its own, its task proxy's (job_proxy/steps.h),
// labelled "<job label>.<step lineage>.r<rank>": a *part* of the job. One checkpoint of the job
// covers every node, committed as one:
// 1. The batch node's daemon (RemoteParts) asks each other node of a running step, through its
//    daemon's peer port (daemon/peer_link.h), to dump the job's parts there (`dump_parts`), and
//    meanwhile dumps its own tree. Each part is dumped and stored like any workload, stopped
//    unless the dump leaves the job running, and waits before its commit.
// 2. Once every node has answered and its own tree is stored, it commits the job's manifest,
//    which names every part in its steps ("parts": label, checkpoint id and rank of each).
// 3. It then says so to each node (`decide_parts`): the parts are committed and their trees
//    stopped or continued as the job's. A dump that fails anywhere, or a word that never comes
//    (5 minutes), deletes what the parts stored and continues their tasks.
// After the requeue the step's new srun carries the parts (kStepPartsVar), and the task proxy
// of each rank restores its own part on whichever node it now runs.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "daemon/dump_job.h"
#include "daemon/node_context.h"
#include "daemon/peer_link.h"
#include "daemon/thread_group.h"
#include "image/manifest.h"

namespace cedana::daemon {

// kStepPartsVar's value for a step's "parts" as the manifest names them.
std::string PartsVariable(const nlohmann::json& parts);

// The batch node's side of one checkpoint of a workload whose steps run on other nodes too.
class RemoteParts {
 public:
  // Asks every other node of the workload's running steps to dump its parts of the job (none:
  // nothing is asked). The error names a node that cannot be found.
  static Result<std::unique_ptr<RemoteParts>> Begin(NodeContext& node,
                                                    const std::string& workload_id,
                                                    const std::string& checkpoint_id,
                                                    const DumpOptions& options);
  // Not committed: each node deletes what its parts stored and continues their tasks.
  ~RemoteParts();
  RemoteParts(const RemoteParts&) = delete;
  RemoteParts& operator=(const RemoteParts&) = delete;

  // Waits for every node's answer and names the parts in `m`'s steps. The error of a node that
  // failed, or kUnavailable when a step's tasks were not all found.
  Status Collect(image::Manifest* m);
  // After the commit of `m`: every node commits its parts (their trees end as the job's do). A
  // node that fails is logged: its parts are then missing from the committed checkpoint, which
  // a restore finds (RestoreAttempt checks the parts first).
  void Commit();

 private:
  struct Node {
    std::string name, address;
    std::future<Result<nlohmann::json>> answer;
  };
  RemoteParts(NodeContext& node, std::string workload_id, std::string round)
      : node_(node), workload_id_(std::move(workload_id)), round_(std::move(round)) {}
  void Decide(bool commit);

  NodeContext& node_;
  const std::string workload_id_;
  const std::string round_;  // the job checkpoint's id
  std::vector<Node> nodes_;
  bool decided_ = false;
};

// Whether every part a manifest's steps name is committed in `store` (a restore that would start
// a step without its other nodes' tasks is not tried); the error names the first that is not.
Status CheckPartsCommitted(storage::CheckpointStore& store, const std::string& owner,
                           const nlohmann::json& steps);

// The other side: the parts of a job on this node, dumped for the batch node's daemon. Serves
// dump_parts and decide_parts on the peer port.
class StepPartsService {
 public:
  explicit StepPartsService(NodeContext& node) : node_(node) {}
  ~StepPartsService();  // rounds waiting for their word are aborted and their dumps joined
  void Serve(PeerServer& server);

 private:
  struct Round;
  Result<nlohmann::json> DumpParts(const nlohmann::json& request);
  Result<nlohmann::json> DecideParts(const nlohmann::json& request);

  NodeContext& node_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Round>> rounds_;  // by the job checkpoint's id
  ThreadGroup dumps_{"step parts: dump"};
};

}  // namespace cedana::daemon
