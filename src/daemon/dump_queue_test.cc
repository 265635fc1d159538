#include "daemon/dump_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include "common/unix_time.h"

namespace cedana::daemon {
namespace {

constexpr uint64_t kMiB = 1 << 20;

QueuedDump Dump(uint64_t bytes, int64_t deadline_ms, uint64_t arrival) {
  return QueuedDump{DumpDemand{"", bytes, 0, deadline_ms}, arrival};
}

void WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 2000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(done());
}

TEST(DumpQueueTest, EarlierDeadlineFirstThenSmallerThenArrival) {
  EXPECT_TRUE(StartsBefore(Dump(100 * kMiB, 1000, 5), Dump(kMiB, 2000, 1)));
  EXPECT_TRUE(StartsBefore(Dump(100 * kMiB, 1000, 5), Dump(kMiB, 0, 1)));  // none is last
  EXPECT_TRUE(StartsBefore(Dump(kMiB, 1000, 5), Dump(2 * kMiB, 1000, 1)));
  EXPECT_TRUE(StartsBefore(Dump(kMiB, 1000, 1), Dump(kMiB, 1000, 2)));
  EXPECT_FALSE(StartsBefore(Dump(kMiB, 1000, 2), Dump(kMiB, 1000, 2)));
}

TEST(DumpQueueTest, ForecastFillsTheSlotsAndSaysWhichMissTheirDeadline) {
  DumpDurationModel model;  // 150 ms for a dump of nothing
  ASSERT_EQ(model.EstimateMs(0), 150);
  const int64_t now = 1'000'000;
  std::vector<DumpDemand> waiting(4, DumpDemand{"", 0, 0, now + 250});
  // One slot still busy for 100 ms, one free.
  auto f = ForecastQueue({100}, waiting, 2, model, now);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].start_ms, now);
  EXPECT_EQ(f[0].finish_ms, now + 150);
  EXPECT_EQ(f[1].start_ms, now + 100);
  EXPECT_EQ(f[1].finish_ms, now + 250);
  EXPECT_TRUE(f[1].fits);
  EXPECT_EQ(f[2].start_ms, now + 150);
  EXPECT_FALSE(f[2].fits);
  EXPECT_EQ(f[3].ahead, 4);  // the running one and three waiting
  EXPECT_FALSE(f[3].fits);
  // Without a deadline everything fits.
  EXPECT_TRUE(ForecastQueue({}, {DumpDemand{"", 1 << 30, 0, 0}}, 2, model, now)[0].fits);
}

TEST(DumpQueueTest, ModelLearnsOverheadFromSmallDumpsAndRateFromLargeOnes) {
  DumpDurationModel model;
  for (int i = 0; i < 20; ++i) model.Record(kMiB, 60);
  EXPECT_NEAR(model.overhead_ms(), 60, 1);
  for (int i = 0; i < 20; ++i) model.Record(1024 * kMiB, 60 + 1000);  // 1 GiB/s
  EXPECT_NEAR(model.bytes_per_ms(), 1024.0 * kMiB / 1000, 1024.0 * kMiB / 1000 * 0.01);
  EXPECT_NEAR(model.EstimateMs(2048 * kMiB), 60 + 2000, 25);
  // Sizes in between teach nothing: their split between overhead and copying is unknown.
  model.Record(32 * kMiB, 100000);
  EXPECT_NEAR(model.EstimateMs(2048 * kMiB), 60 + 2000, 25);
}

TEST(DumpQueueTest, RunsAtMostSlotsAtOnceAndStartsWaitingOnesSmallestFirst) {
  DumpQueue queue({/*slots=*/2, {}});
  std::optional<DumpQueue::Slot> a(queue.Enter({}, {}));
  std::optional<DumpQueue::Slot> b(queue.Enter({}, {}));
  EXPECT_EQ(queue.running(), 2);
  std::mutex mu;
  std::vector<uint64_t> started;
  std::atomic<int> concurrent{0}, most{0};
  std::vector<std::thread> threads;
  for (uint64_t mib : {30, 10, 20}) {
    threads.emplace_back([&, mib] {
      DumpQueue::Slot slot = queue.Enter({"w" + std::to_string(mib), mib * kMiB, 0, 5'000}, {});
      int now = ++concurrent;
      most = std::max(most.load(), now);
      {
        std::lock_guard<std::mutex> lock(mu);
        started.push_back(mib);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      --concurrent;
    });
    WaitUntil([&] { return queue.waiting() == static_cast<int>(threads.size()); });
  }
  a.reset();  // one slot frees: the smallest waiting one starts, then the next
  WaitUntil([&] {
    std::lock_guard<std::mutex> lock(mu);
    return !started.empty();
  });
  b.reset();
  for (auto& t : threads) t.join();
  EXPECT_EQ(started, (std::vector<uint64_t>{10, 20, 30}));
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(queue.running() + queue.waiting(), 0);
}

TEST(DumpQueueTest, MemoryBudgetHoldsBackASecondDumpButNeverTheOnlyOne) {
  DumpQueue queue({/*slots=*/4, [] { return uint64_t{100}; }});
  std::optional<DumpQueue::Slot> big(
      queue.Enter({"big", 0, 500, 0}, {}));  // over the budget, alone
  std::atomic<bool> second_started{false};
  std::thread t([&] {
    DumpQueue::Slot s = queue.Enter({"small", 0, 30, 0}, {});
    second_started = true;
  });
  WaitUntil([&] { return queue.waiting() == 1; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(second_started.load());  // a slot is free, the memory is not
  big.reset();
  t.join();
  EXPECT_TRUE(second_started.load());
}

TEST(DumpQueueTest, ForecastSaysWhenAWaitingDumpCannotMeetItsDeadline) {
  DumpQueue queue({/*slots=*/1, {}});
  std::optional<DumpQueue::Slot> running(queue.Enter({"w", 0, 0, 0}, {}));
  const int64_t now_ms = UnixMillis();
  std::optional<DumpForecast> told;
  std::thread t([&] {
    // Behind one dump of ~150 ms, itself ~150 ms: not done 100 ms from now.
    DumpQueue::Slot s =
        queue.Enter({"w", 0, 0, now_ms + 100}, [&](const DumpForecast& f) { told = f; });
  });
  WaitUntil([&] { return queue.waiting() == 1; });
  running.reset();
  t.join();
  ASSERT_TRUE(told.has_value());
  EXPECT_FALSE(told->fits);
  EXPECT_EQ(told->ahead, 1);
  EXPECT_FALSE(told->first_of_key);  // a dump of "w" is running
  EXPECT_GE(told->finish_ms, now_ms + 250);
}

}  // namespace
}  // namespace cedana::daemon
