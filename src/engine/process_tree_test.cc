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

TEST(ProcessTreeTest, MissingRootIsNotFound) {
  EXPECT_EQ(ProcessTreeOf(999999999).error().code(), Code::kNotFound);
  EXPECT_EQ(SignalTree(999999999, SIGCONT), 0);
}

}  // namespace
}  // namespace cedana::engine
