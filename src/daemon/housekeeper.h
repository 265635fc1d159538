// Housekeeper: the node daemon's periodic chores, every 2 s on one thread (joined when it goes):
// the ends of runs that ended by themselves go into the store (RecordFinishedRuns,
// daemon/lineage_recorder.h), and images dirs that no dump or restore uses leave the work dir
// (SweepWorkDir, daemon/recovery.h); every hour, abandoned checkpoints leave the store
// (daemon/abandoned_checkpoints.h). It is also the work dir's remover
// (NodeContext::RetireWorkDir): a retired images dir wakes it, and it sweeps the work dir at once,
// so that a dump or restore replies without waiting for its images to be unlinked. A problem is
// logged once until it changes. Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/node_context.h"

namespace cedana::daemon {

class Housekeeper {
 public:
  explicit Housekeeper(NodeContext& node);
  ~Housekeeper();  // stops and joins the thread
  Housekeeper(const Housekeeper&) = delete;
  Housekeeper& operator=(const Housekeeper&) = delete;

  void Start();

 private:
  NodeContext& node_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;     // guarded by mu_
  bool retired_ = false;  // a dir was retired since the last sweep; guarded by mu_
  std::thread thread_;
};

}  // namespace cedana::daemon
