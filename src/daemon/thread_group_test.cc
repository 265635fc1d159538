#include "daemon/thread_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

namespace cedana::daemon {
namespace {

using namespace std::chrono_literals;

TEST(ThreadGroupTest, WaitReturnsOnlyWhenEveryWorkHasFinished) {
  ThreadGroup group("test");
  std::atomic<int> done{0};
  for (int i = 0; i < 8; ++i)
    group.Start([&done, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5 * i));
      ++done;
    });
  group.Wait();
  EXPECT_EQ(done.load(), 8);
  EXPECT_EQ(group.Running(), 0u);
}

TEST(ThreadGroupTest, TheDestructorJoinsWhatStillRuns) {
  std::atomic<bool> finished{false};
  {
    ThreadGroup group("test");
    group.Start([&finished] {
      std::this_thread::sleep_for(50ms);
      finished = true;
    });
  }
  EXPECT_TRUE(finished.load()) << "a thread outlived its group";
}

TEST(ThreadGroupTest, WaitSaysHowManyStillRun) {
  ThreadGroup group("test");
  std::atomic<bool> release{false};
  group.Start([&release] {
    while (!release) std::this_thread::sleep_for(1ms);
  });
  group.Start([] {});
  std::optional<size_t> said;
  group.Wait(20ms, [&](size_t n) {
    said = n;
    release = true;
  });
  ASSERT_TRUE(said.has_value());
  EXPECT_EQ(*said, 1u);
}

TEST(ThreadGroupTest, FinishedThreadsAreJoinedAsNewOnesStart) {
  ThreadGroup group("test");
  group.Start([] {});
  for (int i = 0; i < 200 && group.Running() > 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(group.Running(), 0u);
  std::atomic<bool> release{false};
  group.Start([&release] {
    while (!release) std::this_thread::sleep_for(1ms);
  });
  EXPECT_EQ(group.Running(), 1u);
  release = true;
}

TEST(ThreadGroupTest, WorkThatThrowsIsLoggedAndTheGroupGoesOn) {
  ThreadGroup group("test");
  group.Start([] { throw std::runtime_error("boom"); });
  std::atomic<bool> ran{false};
  group.Start([&ran] { ran = true; });
  group.Wait();
  EXPECT_TRUE(ran.load());
}

}  // namespace
}  // namespace cedana::daemon
