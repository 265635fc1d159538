#include "daemon/housekeeper.h"

#include "common/log.h"
#include "daemon/abandoned_checkpoints.h"
#include "daemon/lineage_recorder.h"
#include "daemon/recovery.h"

namespace cedana::daemon {

Housekeeper::Housekeeper(NodeContext& node) : node_(node) {}

Housekeeper::~Housekeeper() {
  // Retired dirs from now on are removed by whoever retires them.
  node_.SetWorkDirRemover({});
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Housekeeper::Start() {
  node_.SetWorkDirRemover([this] {
    std::lock_guard<std::mutex> lock(mu_);
    retired_ = true;
    cv_.notify_all();
  });
  thread_ = std::thread([this] {
    std::string last;
    // Recovery swept the store at start.
    auto next_store_sweep = std::chrono::steady_clock::now() + kAbandonedSweepEvery;
    auto next_chores = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      retired_ = false;
      const bool chores_due = std::chrono::steady_clock::now() >= next_chores;
      lock.unlock();
      if (chores_due) {
        Status s = RecordFinishedRuns(node_);
        // Said once per new problem (a store that is down), not every 2 s.
        if (!s.ok() && s.message() != last) log::Warn("lineage: {}", s.ToString());
        last = s.message();
      }
      SweepWorkDir(node_);
      if (chores_due && std::chrono::steady_clock::now() >= next_store_sweep) {
        SweepAbandonedCheckpoints(node_);
        next_store_sweep = std::chrono::steady_clock::now() + kAbandonedSweepEvery;
      }
      lock.lock();
      if (chores_due) next_chores = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      cv_.wait_until(lock, next_chores, [this] { return stop_ || retired_; });
    }
    // What was retired since the last sweep goes too, rather than to the next daemon's start
    // as a leftover.
    lock.unlock();
    SweepWorkDir(node_);
  });
}

}  // namespace cedana::daemon
