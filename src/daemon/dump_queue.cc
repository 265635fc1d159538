#include "daemon/dump_queue.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <tuple>

#include "common/unix_time.h"

namespace cedana::daemon {
namespace {

// Small dumps teach the overhead, large ones the rate; each moves the model a third of the way.
constexpr uint64_t kSmallDumpBytes = 8ull << 20;
constexpr uint64_t kLargeDumpBytes = 64ull << 20;
constexpr double kLearn = 1.0 / 3;

}  // namespace

void DumpDurationModel::Record(uint64_t bytes, int64_t ms) {
  if (ms < 0) return;
  if (bytes < kSmallDumpBytes) {
    overhead_ms_ += kLearn * (static_cast<double>(ms) - overhead_ms_);
  } else if (bytes >= kLargeDumpBytes) {
    double copying_ms = std::max(1.0, static_cast<double>(ms) - overhead_ms_);
    bytes_per_ms_ += kLearn * (static_cast<double>(bytes) / copying_ms - bytes_per_ms_);
  }
}

int64_t DumpDurationModel::EstimateMs(uint64_t bytes) const {
  return static_cast<int64_t>(overhead_ms_ + static_cast<double>(bytes) / bytes_per_ms_);
}

bool StartsBefore(const QueuedDump& a, const QueuedDump& b) {
  auto key = [](const QueuedDump& d) {
    int64_t deadline =
        d.demand.deadline_ms > 0 ? d.demand.deadline_ms : std::numeric_limits<int64_t>::max();
    return std::tuple(deadline, d.demand.bytes, d.arrival);
  };
  return key(a) < key(b);
}

std::vector<DumpForecast> ForecastQueue(const std::vector<int64_t>& running_left_ms,
                                        const std::vector<DumpDemand>& waiting, int slots,
                                        const DumpDurationModel& model, int64_t now_ms) {
  // Each slot is free again at some time from now; a waiting dump takes the first one free.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> free_at;
  for (int64_t left : running_left_ms) free_at.push(std::max<int64_t>(0, left));
  for (int i = static_cast<int>(running_left_ms.size()); i < std::max(1, slots); ++i)
    free_at.push(0);
  std::vector<DumpForecast> out;
  int ahead = static_cast<int>(running_left_ms.size());
  uint64_t ahead_bytes = 0;
  for (const DumpDemand& d : waiting) {
    int64_t start = free_at.top();
    free_at.pop();
    int64_t finish = start + model.EstimateMs(d.bytes);
    free_at.push(finish);
    DumpForecast f;
    f.ahead = ahead++;
    f.ahead_bytes = ahead_bytes;
    f.start_ms = now_ms + start;
    f.finish_ms = now_ms + finish;
    f.fits = d.deadline_ms <= 0 || f.finish_ms <= d.deadline_ms;
    out.push_back(f);
    ahead_bytes += d.bytes;
  }
  return out;
}

int AutoDumpSlots(unsigned cores) { return 4 * std::max(1, static_cast<int>(cores)); }

uint64_t HalfOfAvailableMemory() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    uint64_t kib = 0;
    in >> kib;
    if (key == "MemAvailable:") return kib * 1024 / 2;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 1ull << 30;
}

DumpQueue::DumpQueue(DumpQueueLimits limits) : limits_(std::move(limits)) {}

DumpQueue::Slot::Slot(Slot&& other) noexcept
    : queue_(other.queue_),
      arrival_(other.arrival_),
      waited_ms_(other.waited_ms_),
      succeeded_(other.succeeded_) {
  other.queue_ = nullptr;
}

DumpQueue::Slot::~Slot() {
  if (queue_ != nullptr) queue_->Leave(arrival_, succeeded_);
}

DumpQueue::Slot DumpQueue::Enter(const DumpDemand& demand,
                                 const std::function<void(const DumpForecast&)>& forecast) {
  const auto entered = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.insert(entries_.end(), Entry{QueuedDump{demand, next_arrival_++}});
  const uint64_t arrival = it->dump.arrival;
  if (forecast) {
    DumpForecast f = ForecastFor(it->dump);
    lock.unlock();  // the caller may write to a socket
    forecast(f);
    lock.lock();
  }
  changed_.wait(lock, [&] { return MayStart(it); });
  it->running = true;
  it->started = std::chrono::steady_clock::now();
  changed_.notify_all();  // a second free slot may be the next one's
  return Slot(this, arrival,
              std::chrono::duration_cast<std::chrono::milliseconds>(it->started - entered).count());
}

void DumpQueue::Leave(uint64_t arrival, bool succeeded) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.dump.arrival == arrival; });
  if (it == entries_.end()) return;
  if (succeeded) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - it->started);
    model_.Record(it->dump.demand.bytes, ms.count());
  }
  entries_.erase(it);
  changed_.notify_all();
}

bool DumpQueue::MayStart(std::list<Entry>::const_iterator it) const {
  int running = 0;
  uint64_t memory = 0;
  for (const Entry& e : entries_) {
    if (e.running) {
      ++running;
      memory += e.dump.demand.memory_bytes;
    } else if (&e != &*it && StartsBefore(e.dump, it->dump)) {
      return false;  // strictly in order: a large dump is not passed for ever by small ones
    }
  }
  if (running == 0) return true;
  if (running >= limits_.slots) return false;
  uint64_t budget =
      limits_.memory_budget ? limits_.memory_budget() : std::numeric_limits<uint64_t>::max();
  return memory + it->dump.demand.memory_bytes <= budget;
}

DumpForecast DumpQueue::ForecastFor(const QueuedDump& dump) const {
  const auto now = std::chrono::steady_clock::now();
  std::vector<int64_t> running_left;
  std::vector<const QueuedDump*> before;
  for (const Entry& e : entries_) {
    if (e.running) {
      auto done = std::chrono::duration_cast<std::chrono::milliseconds>(now - e.started).count();
      running_left.push_back(model_.EstimateMs(e.dump.demand.bytes) - done);
    } else if (e.dump.arrival != dump.arrival && StartsBefore(e.dump, dump)) {
      before.push_back(&e.dump);
    }
  }
  std::sort(before.begin(), before.end(),
            [](const QueuedDump* a, const QueuedDump* b) { return StartsBefore(*a, *b); });
  std::vector<DumpDemand> waiting;
  for (const QueuedDump* d : before) waiting.push_back(d->demand);
  waiting.push_back(dump.demand);
  DumpForecast f = ForecastQueue(running_left, waiting, limits_.slots, model_, UnixMillis()).back();
  for (const Entry& e : entries_) {
    if (e.running) f.ahead_bytes += e.dump.demand.bytes;
    if (e.dump.arrival != dump.arrival && e.dump.demand.key == dump.demand.key)
      f.first_of_key = false;
  }
  return f;
}

int DumpQueue::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.running; }));
}

int DumpQueue::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.running; }));
}

}  // namespace cedana::daemon
