// Agent: the node daemon's link to the controller (when CEDANA_URL is set). Every 2 s it
// reports the node and the SLURM jobs it manages, claims the operations the controller queued
// for this node (policy or on-demand dumps with leave-running, restores) and runs each on its
// own thread, reporting progress and the result. A controller that is down only delays
// policies: jobs and preemption checkpoints never depend on it. Owns one thread.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "daemon/node_context.h"
#include "daemon/thread_group.h"

namespace cedana::daemon {

class Agent {
 public:
  Agent(NodeContext& node, std::string node_name);
  ~Agent();  // stops the thread; operations in flight finish first, however long they take
  void Start();

 private:
  void Loop();
  Status Tick();  // one report and claim; the error when the controller did not answer
  void RunOperation(const nlohmann::json& op);

  NodeContext& node_;
  const std::string node_name_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  ThreadGroup operations_{"agent: operation"};  // joined before the agent goes
};

}  // namespace cedana::daemon
