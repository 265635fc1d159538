#include "engine/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace cedana::engine {
namespace {

TEST(ProcessTreeTest, FindsChildrenAndSignalsThem) {
  // A shell with one sleeping child.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", "sleep 30 & wait", nullptr);
    ::_exit(127);
  }
  std::vector<pid_t> tree;
  for (int i = 0; i < 100 && tree.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tree = ProcessTreeOf(pid).value();
  }
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree[0], pid);
  EXPECT_EQ(SignalTree(pid, SIGSTOP), 2);
  // Stopping is asynchronous: wait for the state, not a fixed time.
  for (int i = 0; i < 200 && ProcessState(tree[1]) != 'T'; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ProcessState(tree[1]), 'T');
  EXPECT_EQ(SignalTree(pid, SIGCONT), 2);
  EXPECT_EQ(SignalTree(pid, SIGKILL), 2);
  int st;
  ::waitpid(pid, &st, 0);
}

// A dead process holds its pid until its parent reaps it: waiting for it to be gone waits for
// that (a restore with the original pids needs them free), and reports a zombie nobody reaps
// as dead once the time is up, a process that still runs as not gone.
TEST(ProcessTreeTest, WaitingUntilGoneWaitsForTheParentToReap) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(0);
  for (int i = 0; i < 200 && ProcessState(pid) != 'Z'; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(ProcessState(pid), 'Z');
  EXPECT_TRUE(WaitUntilGone(pid, std::chrono::milliseconds(100))) << "a zombie nobody reaps";
  EXPECT_EQ(ProcessState(pid), 'Z');
  std::thread reaper([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int st;
    ::waitpid(pid, &st, 0);
  });
  EXPECT_TRUE(WaitUntilGone(pid, std::chrono::seconds(10)));
  EXPECT_EQ(ProcessState(pid), 0) << "returned before the parent reaped it";
  reaper.join();

  pid_t running = ::fork();
  ASSERT_GE(running, 0);
  if (running == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_FALSE(WaitUntilGone(running, std::chrono::milliseconds(100)));
  ::kill(running, SIGKILL);
  int st;
  ::waitpid(running, &st, 0);
}

TEST(ProcessTreeTest, MissingRootIsNotFound) {
  EXPECT_EQ(ProcessTreeOf(999999999).error().code(), Code::kNotFound);
  EXPECT_EQ(SignalTree(999999999, SIGCONT), 0);
}

}  // namespace
}  // namespace cedana::engine
