#include "slurm/slurm_daemon_restart.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/fs.h"

namespace cedana::slurm {
namespace {

// A stand-in daemon: bash started through a symlink named "slurmd" (so /proc/PID/comm is
// "slurmd"), writing its pid file like the real one and exiting on SIGTERM.
constexpr const char* kFakeSlurmd =
    "echo $$ > \"$PIDFILE\"; trap 'exit 0' TERM; while :; do sleep 0.1; done";

pid_t ReadPid(const std::string& path) {
  auto t = fs::ReadFile(path);
  return t.has_value() && !t->empty() ? static_cast<pid_t>(std::stol(*t)) : 0;
}

TEST(SlurmDaemonRestart, NothingRunning) {
  std::vector<std::string> log;
  ASSERT_TRUE(RestartSlurmDaemons(
                  {"/nonexistent/slurm.conf", "/nonexistent/a.pid", "/nonexistent/b.pid"}, &log)
                  .ok());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], "neither slurmctld nor slurmd runs on this node: nothing restarted");
}

TEST(SlurmDaemonRestart, RestartsFromPidFileWithSameArgvAndEnv) {
  if (std::system("systemctl is-active --quiet slurmd 2>/dev/null") == 0)
    GTEST_SKIP() << "a real slurmd runs under systemd here";
  char tmpl[] = "/tmp/cedana-restart-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl, script = dir + "/slurmd", pid_file = dir + "/slurmd.pid";
  ASSERT_EQ(::symlink("/bin/bash", script.c_str()), 0);

  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("PIDFILE", pid_file.c_str(), 1);
    ::execl(script.c_str(), script.c_str(), "-c", kFakeSlurmd, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 50 && ReadPid(pid_file) != child; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(ReadPid(pid_file), child);

  std::vector<std::string> log;
  Status s = RestartSlurmDaemons({dir + "/slurm.conf", dir + "/none.pid", pid_file}, &log);
  EXPECT_TRUE(s.ok()) << s.ToString();  // not ASSERT: the cleanup below must run
  ::kill(child, SIGKILL);               // no-op when it already exited, as it should have
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "the old one did not exit on SIGTERM";
  pid_t fresh = ReadPid(pid_file);
  EXPECT_GT(fresh, 0);
  EXPECT_NE(fresh, child);
  if (fresh > 0 && fresh != child) ::kill(fresh, SIGTERM);
  (void)fs::RemoveTree(dir);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], "restarted slurmd (pid " + std::to_string(child) + "): " + script + " -c " +
                        kFakeSlurmd);
}

}  // namespace
}  // namespace cedana::slurm
