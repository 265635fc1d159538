#include "daemon/housekeeper.h"

#include "common/log.h"
#include "daemon/abandoned_checkpoints.h"
#include "daemon/lineage_recorder.h"
#include "daemon/recovery.h"

namespace cedana::daemon {

Housekeeper::Housekeeper(const NodeContext& node) : node_(node) {}

Housekeeper::~Housekeeper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Housekeeper::Start() {
  thread_ = std::thread([this] {
    std::string last;
    // Recovery swept the store at start.
    auto next_store_sweep = std::chrono::steady_clock::now() + kAbandonedSweepEvery;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      Status s = RecordFinishedRuns(node_);
      // Said once per new problem (a store that is down), not every 2 s.
      if (!s.ok() && s.message() != last) log::Warn("lineage: {}", s.ToString());
      last = s.message();
      SweepWorkDir(node_);
      if (std::chrono::steady_clock::now() >= next_store_sweep) {
        SweepAbandonedCheckpoints(node_);
        next_store_sweep = std::chrono::steady_clock::now() + kAbandonedSweepEvery;
      }
      lock.lock();
      cv_.wait_for(lock, std::chrono::seconds(2), [this] { return stop_; });
    }
  });
}

}  // namespace cedana::daemon
