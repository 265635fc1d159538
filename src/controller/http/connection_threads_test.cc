#include "controller/http/connection_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace cedana::controller {
namespace {

// Slow connections hold only their own threads: a quick one runs beside them at once; past the
// cap, connections wait for a thread, and every one of them runs in the end.
TEST(ConnectionThreadsTest, SlowConnectionsDoNotHoldTheOthersThreads) {
  ConnectionThreads threads(4);
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  for (int i = 0; i < 3; ++i)
    threads.enqueue([&] {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++done;
    });
  std::atomic<bool> quick{false};
  threads.enqueue([&] {
    quick = true;
    ++done;
  });
  for (int i = 0; i < 2000 && !quick; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(quick) << "a quick connection waited behind slow ones";

  for (int i = 0; i < 5; ++i)
    threads.enqueue([&] {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++done;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_LE(threads.running(), 4u);
  release = true;
  threads.shutdown();
  EXPECT_EQ(done.load(), 9);
  EXPECT_EQ(threads.running(), 0u);
}

}  // namespace
}  // namespace cedana::controller
