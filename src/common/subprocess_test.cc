#include "common/subprocess.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "common/unique_fd.h"

namespace cedana::subprocess {
namespace {

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/cedana-subprocess-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `command` keeping stdout; fails the test when it cannot start.
  std::string StdoutOf(const Command& command, Exit* exit = nullptr) {
    std::string out;
    Result<Exit> r = subprocess::Run(command, Output::kStdout, &out);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    if (exit != nullptr && r.has_value()) *exit = *r;
    return out;
  }

  std::string WriteFile(const std::string& name, const std::string& text, mode_t mode) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::string dir_;
};

// The daemon raises its own limit of open files; what it starts keeps the limit it had before,
// unless a command sets its own. (Programs the later tests start get 300 too.)
TEST_F(SubprocessTest, ProgramsKeepTheFileLimitThisProcessHadBeforeRaisingIt) {
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  ASSERT_GT(before.rlim_max, 300u);
  rlimit low = before;
  low.rlim_cur = 300;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  ASSERT_TRUE(subprocess::RaiseOwnFileLimit().ok());
  rlimit raised{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &raised), 0);
  EXPECT_EQ(raised.rlim_cur, before.rlim_max);
  EXPECT_EQ(StdoutOf({.argv = {"/bin/sh", "-c", "ulimit -n"}}), "300\n");
  EXPECT_EQ(
      StdoutOf({.argv = {"/bin/sh", "-c", "ulimit -n"}, .rlimits = {{RLIMIT_NOFILE, {77, 77}}}}),
      "77\n");
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
}

TEST_F(SubprocessTest, RunsAProgramAndKeepsItsOutput) {
  Exit exit;
  EXPECT_EQ(StdoutOf({.argv = {"/bin/echo", "hello"}}, &exit), "hello\n");
  EXPECT_TRUE(exit.ok());
}

TEST_F(SubprocessTest, FindsTheProgramOnThePathOfTheChildsEnvironment) {
  Command c{.argv = {"sh", "-c", "echo $GREETING"},
            .env = std::vector<std::string>{"PATH=" + dir_ + ":/usr/bin:/bin", "GREETING=old"},
            .extra_env = {"GREETING=new"}};
  EXPECT_EQ(StdoutOf(c), "new\n");
  // Only the environment given: nothing of ours.
  ::setenv("CEDANA_SUBPROCESS_TEST", "leaked", 1);
  c.argv = {"sh", "-c", "echo ${CEDANA_SUBPROCESS_TEST:-absent}"};
  EXPECT_EQ(StdoutOf(c), "absent\n");
  c.env.reset();
  EXPECT_EQ(StdoutOf(c), "leaked\n") << "without env the child has ours";
  ::unsetenv("CEDANA_SUBPROCESS_TEST");
}

TEST_F(SubprocessTest, AProgramNotOnThePathIsNotFoundBeforeAnyFork) {
  Result<pid_t> r = Start(
      {.argv = {"cedana-no-such-program"}, .env = std::vector<std::string>{"PATH=/usr/bin:/bin"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_NE(
      r.error().message().find("cedana-no-such-program: no such program on PATH (/usr/bin:/bin)"),
      std::string::npos)
      << r.error().message();
}

TEST_F(SubprocessTest, AFailedExecIsAnErrorOfStartNamingTheProgram) {
  std::string data = WriteFile("data", "not a program\n", 0644);
  Result<pid_t> r = Start({.argv = {data}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kPermissionDenied);
  EXPECT_EQ(r.error().message(), "executing " + data + ": Permission denied");
}

TEST_F(SubprocessTest, AMissingDirectoryIsNamed) {
  Result<pid_t> r = Start({.argv = {"/bin/true"}, .cwd = dir_ + "/gone"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  EXPECT_EQ(r.error().message(),
            "changing /bin/true's directory to " + dir_ + "/gone: No such file or directory");
}

TEST_F(SubprocessTest, RunsInTheDirectoryGiven) {
  EXPECT_EQ(StdoutOf({.argv = {"/bin/pwd"}, .cwd = dir_}), dir_ + "\n");
}

TEST_F(SubprocessTest, AScriptWithoutInterpreterLineRunsWithSh) {
  std::string script = WriteFile("script", "echo from sh \"$1\"\n", 0755);
  EXPECT_EQ(StdoutOf({.argv = {script, "arg"}}), "from sh arg\n");
}

TEST_F(SubprocessTest, OnlyTheNamedFdsReachTheProgram) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);  // without O_CLOEXEC: it would leak through a plain fork/exec
  UniqueFd rd(p[0]), wr(p[1]);
  // Strays without O_CLOEXEC, below and above the highest fd named.
  UniqueFd stray(::open("/dev/null", O_RDONLY));
  UniqueFd high_stray(::fcntl(stray.get(), F_DUPFD, 20));
  std::string script = fmt::format(
      "echo to-nine >&9; for fd in {} {} {}; do test -e /proc/self/fd/$fd && echo open-$fd; done; "
      "echo listed",
      stray.get(), high_stray.get(), wr.get());
  std::string out = StdoutOf({.argv = {"/bin/sh", "-c", script}, .fds = {{9, wr.get()}}});
  wr.Reset();
  char buf[64] = {};
  ASSERT_GT(::read(rd.get(), buf, sizeof buf - 1), 0);
  EXPECT_STREQ(buf, "to-nine\n");
  EXPECT_EQ(out, "listed\n") << "fds of ours reached the program";
}

TEST_F(SubprocessTest, FdsThatSwapPlacesBothArrive) {
  int a[2], b[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(b, O_CLOEXEC), 0);
  UniqueFd a_rd(a[0]), a_wr(a[1]), b_rd(b[0]), b_wr(b[1]);
  // Each write end goes to the other's number.
  Command c{
      .argv = {"/bin/sh", "-c", fmt::format("echo A >&{}; echo B >&{}", b_wr.get(), a_wr.get())},
      .fds = {{b_wr.get(), a_wr.get()}, {a_wr.get(), b_wr.get()}}};
  StdoutOf(c);
  a_wr.Reset();
  b_wr.Reset();
  char buf[8] = {};
  ASSERT_GT(::read(a_rd.get(), buf, sizeof buf - 1), 0);
  EXPECT_STREQ(buf, "A\n");
  std::fill(std::begin(buf), std::end(buf), 0);
  ASSERT_GT(::read(b_rd.get(), buf, sizeof buf - 1), 0);
  EXPECT_STREQ(buf, "B\n");
}

TEST_F(SubprocessTest, TheProgramGetsFreshSignalsWithTheIgnoredOnesIgnored) {
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old), 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_usr1 {};
  ::sigaction(SIGUSR1, &ignore, &old_usr1);
  std::string out = StdoutOf(
      {.argv = {"grep", "^Sig\\(Blk\\|Ign\\)", "/proc/self/status"}, .ignored_signals = {SIGINT}});
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_NE(out.find("SigBlk:\t0000000000000000"), std::string::npos) << out;
  EXPECT_NE(out.find("SigIgn:\t0000000000000002"), std::string::npos) << "only SIGINT: " << out;
}

TEST_F(SubprocessTest, RunKeepsStderrOnlyWhenAsked) {
  Command c{.argv = {"/bin/sh", "-c", "echo out; echo err >&2"}};
  std::string out;
  ASSERT_TRUE(subprocess::Run(c, Output::kStdout, &out).has_value());
  EXPECT_EQ(out, "out\n");
  out.clear();
  ASSERT_TRUE(subprocess::Run(c, Output::kStdoutAndStderr, &out).has_value());
  EXPECT_EQ(out, "out\nerr\n");
}

TEST_F(SubprocessTest, ExitsAreDescribed) {
  Result<Exit> code = subprocess::Run({.argv = {"/bin/sh", "-c", "exit 3"}});
  ASSERT_TRUE(code.has_value());
  EXPECT_FALSE(code->ok());
  EXPECT_EQ(code->Describe(), "exited with code 3");
  Result<Exit> killed = subprocess::Run({.argv = {"/bin/sh", "-c", "kill -9 $$"}});
  ASSERT_TRUE(killed.has_value());
  EXPECT_TRUE(killed->signaled);
  EXPECT_EQ(killed->Describe(), "killed by signal 9 (SIGKILL)");
}

TEST_F(SubprocessTest, ADetachedProgramIsNotOurChild) {
  Result<pid_t> pid = Start({.argv = {"/bin/sleep", "30"}, .new_session = true, .detached = true});
  ASSERT_TRUE(pid.has_value()) << pid.error().ToString();
  std::ifstream stat("/proc/" + std::to_string(*pid) + "/stat");
  std::string pid_field, comm, state;
  pid_t ppid = 0;
  stat >> pid_field >> comm >> state >> ppid;
  ::kill(*pid, SIGKILL);
  EXPECT_EQ(comm, "(sleep)");
  EXPECT_NE(ppid, ::getpid());
  EXPECT_EQ(::getsid(*pid) == ::getsid(0), false) << "it has a session of its own";
}

TEST_F(SubprocessTest, ADetachedProgramThatCannotRunIsAnError) {
  Result<pid_t> pid = Start({.argv = {"/bin/true"}, .cwd = dir_ + "/gone", .detached = true});
  ASSERT_FALSE(pid.has_value());
  EXPECT_EQ(pid.error().code(), Code::kNotFound);
}

TEST_F(SubprocessTest, RunsAsTheIdentityGiven) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  std::string out;
  ASSERT_TRUE(subprocess::Run({.argv = {"/bin/sh", "-c", "id -u; id -g; id -G"},
                               .identity = Identity{65534, 65534, {65534}}},
                              Output::kStdout, &out)
                  .has_value());
  EXPECT_EQ(out, "65534\n65534\n65534\n");
}

TEST_F(SubprocessTest, ANewPidNamespaceMakesTheProgramItsInit) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_EQ(StdoutOf({.argv = {"/bin/sh", "-c", "echo $$"}, .namespaces = CLONE_NEWPID}), "1\n");
}

// The line of /proc/<pid>/status that starts with `key`, without it.
std::string StatusField(pid_t pid, const std::string& key) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  return "";
}

TEST_F(SubprocessTest, AProgramJoiningATreesNamespacesBecomesAChildOfItsInit) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  // The tree: an init that waits for its children (as a batch script's shell does).
  Result<pid_t> init = Start({.argv = {"/bin/sh", "-c", "sleep 5 & wait"},
                              .new_session = true,
                              .namespaces = CLONE_NEWPID | CLONE_NEWIPC});
  ASSERT_TRUE(init.has_value()) << init.error().ToString();
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, *init, 0)));
  ASSERT_TRUE(pidfd.valid());
  std::string procs = WriteFile("cgroup.procs", "", 0644);  // not a cgroup: just written to
  UniqueFd cgroup(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
  Result<pid_t> joined = Start({.argv = {"/bin/sh", "-c", "ulimit -n; sleep 5"},
                                .new_session = true,
                                .join_namespaces_of = pidfd.get(),
                                .cgroup_procs = {cgroup.get()},
                                .rlimits = {{RLIMIT_NOFILE, {77, 77}}}});
  ASSERT_TRUE(joined.has_value()) << joined.error().ToString();
  // Our pid for it, its parent the tree's init, its pid there the tree's next one, its session
  // its own (inside the namespace), the IPC namespace the tree's.
  EXPECT_EQ(StatusField(*joined, "PPid:\t"), std::to_string(*init));
  EXPECT_EQ(StatusField(*joined, "NSpid:\t").substr(0, std::to_string(*joined).size() + 1),
            std::to_string(*joined) + "\t");
  EXPECT_EQ(std::filesystem::read_symlink(fmt::format("/proc/{}/ns/ipc", *joined)),
            std::filesystem::read_symlink(fmt::format("/proc/{}/ns/ipc", *init)));
  EXPECT_EQ(std::filesystem::read_symlink(fmt::format("/proc/{}/ns/pid", *joined)),
            std::filesystem::read_symlink(fmt::format("/proc/{}/ns/pid", *init)));
  EXPECT_EQ(::getsid(*joined), *joined);
  std::ifstream written(procs);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(written), {}), "0")
      << "it wrote itself into the cgroup";
  std::ifstream limits(fmt::format("/proc/{}/limits", *joined));
  std::string text(std::istreambuf_iterator<char>(limits), {});
  EXPECT_NE(text.find("Max open files            77                   77"), std::string::npos)
      << text;
  ::kill(*joined, SIGKILL);
  ::kill(*init, SIGKILL);
  (void)Wait(*init);
}

TEST_F(SubprocessTest, JoiningNamespacesOfAProcessThatIsGoneSaysSo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  Result<pid_t> gone = Start({.argv = {"true"}});
  ASSERT_TRUE(gone.has_value());
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, *gone, 0)));
  ASSERT_TRUE(Wait(*gone).has_value());
  Result<pid_t> joined = Start({.argv = {"true"}, .join_namespaces_of = pidfd.get()});
  ASSERT_FALSE(joined.has_value());
  EXPECT_NE(joined.error().message().find("joining the PID and IPC namespaces for /usr/bin/true"),
            std::string::npos)
      << joined.error().message();
}

TEST_F(SubprocessTest, AForkedFunctionsResultIsItsExitCode) {
  Result<pid_t> pid = ForkRunning([] { return 7; });
  ASSERT_TRUE(pid.has_value());
  Result<Exit> exit = Wait(*pid);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->code, 7);
}

TEST_F(SubprocessTest, FindProgramSkipsWhatCannotBeExecuted) {
  std::filesystem::create_directories(dir_ + "/a/tool");  // a directory of that name
  std::filesystem::create_directories(dir_ + "/b");
  WriteFile("b/tool", "#!/bin/sh\n", 0644);  // no execute bit
  std::filesystem::create_directories(dir_ + "/c");
  std::string tool = WriteFile("c/tool", "#!/bin/sh\n", 0755);
  std::string path = dir_ + "/a::" + dir_ + "/b:" + dir_ + "/c";
  Result<std::string> found = FindProgram("tool", path);
  ASSERT_TRUE(found.has_value()) << found.error().ToString();
  EXPECT_EQ(*found, tool);
  EXPECT_EQ(FindProgram("./relative/tool", "").value(), "./relative/tool");
  EXPECT_EQ(FindProgram("tool", dir_ + "/a:" + dir_ + "/b").error().code(), Code::kNotFound);
  EXPECT_EQ(FindProgram("", path).error().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cedana::subprocess
