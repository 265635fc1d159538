// LineageKeeper: puts the end of every run that ended by itself (WorkloadState::ended_by_itself)
// into the store once, as its label's lineage record (image/lineage.h), so that the next job or
// restore by label, on any node, starts fresh. Recorded workloads get a marker in their record
// dir, so a restarted daemon records what it missed and nothing twice. RecordFinishedRuns runs
// before every restore by label on this node; LineageKeeper runs it at daemon start and every
// 2 s on its own thread. Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/result.h"
#include "daemon/node.h"

namespace cedana::daemon {

// Records every end not recorded yet; the first error (the others are still tried). One pass at
// a time in the process.
Status RecordFinishedRuns(const Node& node);

class LineageKeeper {
 public:
  explicit LineageKeeper(const Node& node);
  ~LineageKeeper();  // stops and joins the thread
  LineageKeeper(const LineageKeeper&) = delete;
  LineageKeeper& operator=(const LineageKeeper&) = delete;

  void Start();

 private:
  const Node& node_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace cedana::daemon
