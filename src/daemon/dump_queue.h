// DumpQueue: how many dumps the node daemon runs at once, and in which order the others start.
// One preemption can hit every enabled job of a node at the same moment. Fifty CRIUs at once
// thrash cores and memory, so every job stays frozen longer and more of them miss SLURM's grace
// time; one at a time leaves cores idle while CRIU waits on ptrace and fsync. So dumps run up
// to `slots` at once and within a memory budget, and the others wait (their workloads run on,
// not frozen) in order of their deadline (when SLURM kills the job: the end of the grace time;
// none for a policy or manual dump), then smallest first: when many share one deadline,
// smallest first is the order that lets the most of them finish in time. Each dump is told as
// it enters when it is expected to finish, from what this node's dumps have taken so far
// (DumpDurationModel), and so whether it fits its deadline. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <vector>

namespace cedana::daemon {

struct DumpDemand {
  std::string key;            // what is dumped (a workload id): one dump per key is "first"
  uint64_t bytes = 0;         // the workload's resident memory: about what CRIU writes
  uint64_t memory_bytes = 0;  // what the dump itself holds in memory while it runs
  int64_t deadline_ms = 0;    // unix ms by which it must have ended; 0 = none
};

struct DumpForecast {
  int ahead = 0;             // dumps running or waiting that go before this one
  uint64_t ahead_bytes = 0;  // their bytes
  int64_t start_ms = 0;      // expected start, unix ms
  int64_t finish_ms = 0;     // expected end, unix ms
  bool fits = true;          // finish_ms <= deadline_ms, or no deadline
  bool first_of_key = true;  // no other dump of the same key is running or waiting
};

// A dump's duration as overhead + bytes / rate, learned from this node's finished dumps (with
// the contention of the dumps that ran beside them, which is what a forecast needs). Starts
// from what a small dump and a large one took on a 2-core test machine. Not thread-safe.
class DumpDurationModel {
 public:
  void Record(uint64_t bytes, int64_t ms);
  int64_t EstimateMs(uint64_t bytes) const;
  int64_t overhead_ms() const { return static_cast<int64_t>(overhead_ms_); }
  double bytes_per_ms() const { return bytes_per_ms_; }

 private:
  double overhead_ms_ = 150;
  double bytes_per_ms_ = 200.0 * 1024 * 1024 / 1000;  // 200 MiB/s
};

// The order dumps start in: earlier deadline (none is last), then fewer bytes, then arrival.
struct QueuedDump {
  DumpDemand demand;
  uint64_t arrival = 0;
};
bool StartsBefore(const QueuedDump& a, const QueuedDump& b);

// When each of `waiting` (in starting order) is expected to start and finish, with `slots`
// dumps at a time and the running ones needing `running_left_ms` more each. Memory is left out:
// the budget seldom binds before the slots do.
std::vector<DumpForecast> ForecastQueue(const std::vector<int64_t>& running_left_ms,
                                        const std::vector<DumpDemand>& waiting, int slots,
                                        const DumpDurationModel& model, int64_t now_ms);

struct DumpQueueLimits {
  int slots = 2;
  // Bytes of memory the dumps running at once may hold in all, read at each admission; at
  // least one dump runs whatever it needs.
  std::function<uint64_t()> memory_budget;
};

// How many dumps at once for this node when the config says 0 (auto): four per core. A small
// dump mostly waits (ptrace, fork, fsync), so one per core leaves the cores idle; the memory
// budget, not this, holds back large ones. Measured: docs/architecture.md, BENCHMARKS.md.
int AutoDumpSlots(unsigned cores);
// Half of MemAvailable (/proc/meminfo) now; 1 GiB when it cannot be read.
uint64_t HalfOfAvailableMemory();

class DumpQueue {
 public:
  explicit DumpQueue(DumpQueueLimits limits);

  // A dump allowed to run; ending it frees its slot. Record its success to teach the model.
  class Slot {
   public:
    Slot(Slot&& other) noexcept;
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    void Succeeded() { succeeded_ = true; }
    int64_t waited_ms() const { return waited_ms_; }  // from Enter to its start

   private:
    friend class DumpQueue;
    Slot(DumpQueue* queue, uint64_t arrival, int64_t waited_ms)
        : queue_(queue), arrival_(arrival), waited_ms_(waited_ms) {}
    DumpQueue* queue_;
    uint64_t arrival_;
    int64_t waited_ms_;
    bool succeeded_ = false;
  };

  // Waits until the dump may start. `forecast` is called once, before any wait, with when it is
  // expected to start and finish (it may start late, when later dumps with earlier deadlines
  // arrive, or early, when dumps end sooner than forecast).
  Slot Enter(const DumpDemand& demand, const std::function<void(const DumpForecast&)>& forecast);

  int running() const;
  int waiting() const;

 private:
  struct Entry {
    QueuedDump dump;
    bool running = false;
    std::chrono::steady_clock::time_point started;
  };
  void Leave(uint64_t arrival, bool succeeded);
  // Whether `it`, waiting, may start now. Requires mu_.
  bool MayStart(std::list<Entry>::const_iterator it) const;
  DumpForecast ForecastFor(const QueuedDump& dump) const;  // requires mu_

  const DumpQueueLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::list<Entry> entries_;   // running and waiting, in arrival order; guarded by mu_
  uint64_t next_arrival_ = 0;  // guarded by mu_
  DumpDurationModel model_;    // guarded by mu_
};

}  // namespace cedana::daemon
