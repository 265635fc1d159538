#include "storage/part_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace cedana::storage {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(PartBudgetTest, HoldsWholePartsAndAtLeastOne) {
  EXPECT_EQ(PartBudget::Create(128 * kMiB, 16 * kMiB)->limit_bytes(), 128 * kMiB);
  EXPECT_EQ(PartBudget::Create(40 * kMiB, 16 * kMiB)->limit_bytes(), 32 * kMiB);
  // Smaller than a part (the controller's kNoStreamMemory): one part, so a stream still works.
  EXPECT_EQ(PartBudget::Create(0, 16 * kMiB)->limit_bytes(), 16 * kMiB);
}

TEST(PartBudgetTest, SecondPartOnlyWhileOneIsFree) {
  auto budget = PartBudget::Create(3 * kMiB, kMiB);
  PartBudget::Lease a = budget->TakeFirst();
  PartBudget::Lease b = budget->TakeFirst();
  PartBudget::Lease a2 = budget->TrySecond();
  EXPECT_TRUE(a && b && a2);
  EXPECT_FALSE(budget->TrySecond()) << "every part is leased";
  a2.Release();
  EXPECT_TRUE(budget->TrySecond()) << "a released part is free again";
  EXPECT_EQ(budget->peak_bytes(), 3 * kMiB);
}

TEST(PartBudgetTest, LeasesGiveTheirPartBackOnceWhenMovedOrDestroyed) {
  auto budget = PartBudget::Create(2 * kMiB, kMiB);
  {
    PartBudget::Lease a = budget->TakeFirst();
    PartBudget::Lease moved = std::move(a);
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from lease is empty
    PartBudget::Lease b = budget->TakeFirst();
    b = std::move(moved);  // b's own part goes back, moved's is now b's
    EXPECT_TRUE(budget->TrySecond()) << "one part free after the assignment";
  }
  // Everything went back exactly once: both parts can be taken again, and no third.
  PartBudget::Lease x = budget->TakeFirst();
  PartBudget::Lease y = budget->TakeFirst();
  EXPECT_FALSE(budget->TrySecond());
}

TEST(PartBudgetTest, AFirstPartWaitsUntilOneIsGivenBack) {
  auto budget = PartBudget::Create(kMiB, kMiB);
  PartBudget::Lease held = budget->TakeFirst();
  auto waiter = std::async(std::launch::async, [&] { return bool(budget->TakeFirst()); });
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  held.Release();
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(waiter.get());
}

// Many streams over few parts, as a checkpoint with more streams than the budget has parts: all
// of them finish, and never more than the limit is leased.
TEST(PartBudgetTest, ManyStreamsShareFewPartsAndAllFinish) {
  auto budget = PartBudget::Create(4 * kMiB, kMiB);
  std::atomic<int> leased{0}, most{0}, finished{0};
  auto count = [&](int delta) {
    int now = leased += delta;
    for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
    }
  };
  std::vector<std::thread> streams;
  for (int i = 0; i < 16; ++i) {
    streams.emplace_back([&] {
      PartBudget::Lease first = budget->TakeFirst();
      count(1);
      for (int part = 0; part < 20; ++part) {
        PartBudget::Lease second = budget->TrySecond();
        if (second) count(1);
        std::this_thread::yield();
        if (second) count(-1);
      }
      count(-1);
      ++finished;
    });
  }
  for (std::thread& t : streams) t.join();
  EXPECT_EQ(finished, 16);
  EXPECT_LE(most, 4);
  EXPECT_LE(budget->peak_bytes(), 4 * kMiB);
  EXPECT_GE(budget->peak_bytes(), 1 * kMiB);
}

}  // namespace
}  // namespace cedana::storage
