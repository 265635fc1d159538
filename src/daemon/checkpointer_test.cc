// The checkpoint core's steps and rollbacks, over fakes: a CRIU engine that writes a small
// images dir (or streams it) and fails where a test says, processes that only record what was
// done to them, a launcher that records what it would restore, and a local store that fails
// where a test says. Runs in milliseconds and without root. The real-CRIU suites
// (tests/integration) cover the same promises end to end.
#include "daemon/checkpointer.h"
#include "daemon/step_parts.h"

#include <signal.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/system_names.h"
#include "daemon/dump_journal.h"
#include "daemon/recovery.h"
#include "image/core_image_for_test.h"
#include "image/manifest.h"
#include "storage/local_store.h"
#include "storage/temp_dir_for_test.h"

namespace cedana::daemon {
namespace {

constexpr uid_t kOwner = 4242;  // no such user needed: the fakes never act as anyone
constexpr pid_t kPid = 777777;  // the workload's init; no such process needed either
constexpr uint64_t kPidStart = 1234;
const char kWorkload[] = "wl-test";
const char kLabel[] = "lbl";

// The images a dump of the workload writes: one task's core (its credentials), its memory map
// and pages, and CRIU's log.
std::vector<std::pair<std::string, std::string>> FakeImages(uint32_t task_uid) {
  image::fixtures::Creds creds;
  creds.uid = creds.euid = task_uid;
  creds.gid = creds.egid = kOwner;
  // Incompressible, as most of a scientific job's memory is: every stream gets its share.
  std::string pages(300 << 10, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : pages) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return {{"inventory.img", "inventory"},
          {"core-1.img", image::fixtures::CoreImage(creds)},
          {"pagemap-1.img", "pagemap"},
          {"pages-1.img", pages},
          {"stats-dump", "stats"}};
}

class FakeEngine : public engine::CheckpointEngine {
 public:
  const engine::CriuSettings& settings() const override { return settings_; }

  Status Dump(const engine::DumpRequest& request) const override {
    dumps_++;
    if (fail_) return InternalError("criu: dump failed (fake)");
    for (const auto& [name, bytes] : FakeImages(task_uid_))
      CEDANA_RETURN_IF_ERROR(fs::WriteFileAtomic(request.images_dir + "/" + name, bytes, 0600));
    return WriteLog(request);
  }

  // As criu --stream: every image through the receiver; a receiver that fails fails CRIU.
  Status DumpDirect(const engine::DumpRequest& request,
                    engine::ImageReceiver* receiver) const override {
    dumps_++;
    for (const auto& [name, bytes] : FakeImages(task_uid_)) {
      if (fail_ && name == "pages-1.img") return InternalError("criu: dump failed (fake)");
      if (name == "stats-dump" && write_until_refused_)
        CEDANA_RETURN_IF_ERROR(WriteUntilRefused(receiver));
      Result<int> file = receiver->Open(name);
      if (!file.has_value()) return InternalError("criu: image streamer went away");
      for (size_t at = 0; at < bytes.size(); at += 64 << 10)
        if (!receiver
                 ->Write(*file, bytes.data() + at, std::min<size_t>(64 << 10, bytes.size() - at))
                 .ok())
          return InternalError("criu: image streamer went away");
      if (!receiver->Close(*file).ok()) return InternalError("criu: image streamer went away");
    }
    return WriteLog(request);
  }

  // A CRIU with much more memory to write: more pages until the receiver refuses them (5 s at
  // most), as CRIU does once the store behind the receiver failed.
  static Status WriteUntilRefused(engine::ImageReceiver* receiver) {
    Result<int> file = receiver->Open("pages-2.img");
    if (!file.has_value()) return InternalError("criu: image streamer went away");
    const std::string chunk(64 << 10, 'x');
    for (int i = 0; i < 5000; ++i) {
      if (!receiver->Write(*file, chunk.data(), chunk.size()).ok())
        return InternalError("criu: image streamer went away");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return OkStatus();  // the test fails: the store never failed
  }

  // CRIU's log names the network lock it set for connections dumped established.
  static Status WriteLog(const engine::DumpRequest& request) {
    return fs::WriteFileAtomic(request.images_dir + "/dump.log",
                               request.tcp_established ? "network locked\n" : "finished\n", 0600);
  }

  engine::CriuSettings settings_{"/usr/sbin/criu", std::chrono::seconds(5), false};
  bool fail_ = false;
  uint32_t task_uid_ = kOwner;
  bool write_until_refused_ = false;  // direct: CRIU still writes when the store fails
  mutable std::atomic<int> dumps_{0};
};

class FakeProcesses : public engine::ProcessControl {
 public:
  int SignalTree(pid_t root, int sig) override {
    Record(fmt::format("{} {}",
                       sig == SIGCONT   ? "SIGCONT"
                       : sig == SIGKILL ? "SIGKILL"
                                        : "signal",
                       root));
    return 1;
  }
  bool WaitUntilGone(pid_t, std::chrono::milliseconds) override { return true; }
  uint64_t StartTime(pid_t pid) override { return pid == kPid ? kPidStart : 0; }
  bool Traced(pid_t) override { return false; }
  uint64_t ResidentBytes(pid_t) override { return 1 << 20; }
  Result<engine::TreeTcp> ReadTcp(pid_t) override { return tcp_; }
  // As UndoLeftLock: nothing to do when the log names no lock.
  Status UndoNetworkLock(const std::string& dump_log, pid_t continued_root) override {
    Result<std::string> log = fs::ReadFile(dump_log);
    if (log.has_value() && log->find("network locked") != std::string::npos)
      Record(fmt::format("unlock {}", continued_root));
    return OkStatus();
  }

  std::vector<std::string> actions() {
    std::lock_guard lock(mu_);
    return actions_;
  }
  engine::TreeTcp tcp_;

 private:
  void Record(std::string what) {
    std::lock_guard lock(mu_);
    actions_.push_back(std::move(what));
  }
  std::mutex mu_;
  std::vector<std::string> actions_;
};

class FakeLauncher : public WorkloadLauncher {
 public:
  Result<SupervisorStarted> Launch(const WorkloadRecords& records, const std::string& id,
                                   int) const override {
    CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, records.LoadSpec(id));
    launched_.push_back(spec);
    if (fail_all_ || (fail_direct_ && spec.direct_restore))
      return InternalError("criu: restore failed (fake)");
    return SupervisorStarted{kPid + 1, kPid + 2};
  }
  bool fail_all_ = false;
  bool fail_direct_ = false;
  mutable std::vector<WorkloadSpec> launched_;
};

// Where a test wants the store to fail: stream writes after `fail_after_bytes` (per stream),
// or the commit. Shared by every store the node opens.
struct StoreFaults {
  int64_t fail_after_bytes = -1;
  bool fail_commit = false;
};

// A local store that fails as its StoreFaults say.
class FaultyStore : public storage::LocalStore {
 public:
  FaultyStore(std::string root, std::shared_ptr<const StoreFaults> faults)
      : LocalStore(std::move(root)), faults_(std::move(faults)) {}

  Result<std::unique_ptr<storage::ByteSink>> CreateStream(const storage::CheckpointRef& ref,
                                                          int index) override {
    CEDANA_ASSIGN_OR_RETURN(auto sink, LocalStore::CreateStream(ref, index));
    if (faults_->fail_after_bytes < 0) return sink;
    return std::unique_ptr<storage::ByteSink>(
        std::make_unique<FailingSink>(std::move(sink), faults_->fail_after_bytes));
  }
  Status Commit(const storage::CheckpointRef& ref, const std::string& manifest) override {
    if (faults_->fail_commit) return UnavailableError("the store refused the manifest (fake)");
    return LocalStore::Commit(ref, manifest);
  }

 private:
  class FailingSink : public storage::ByteSink {
   public:
    FailingSink(std::unique_ptr<storage::ByteSink> sink, int64_t budget)
        : sink_(std::move(sink)), budget_(budget) {}
    Status Write(const void* data, size_t size) override {
      budget_ -= static_cast<int64_t>(size);
      if (budget_ < 0) return UnavailableError("No space left on device (fake)");
      return sink_->Write(data, size);
    }
    Status Close() override { return sink_->Close(); }

   private:
    std::unique_ptr<storage::ByteSink> sink_;
    int64_t budget_;
  };
  std::shared_ptr<const StoreFaults> faults_;
};

// Everything a test's node needs, in one temporary dir.
class CheckpointerTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { MakeNode(GetParam()); }

  void MakeNode(bool direct) {
    Config config;
    config.checkpoint_dir = tmp_.Sub("checkpoints");
    config.node.work_dir = tmp_.Sub("work");
    config.node.state_dir = tmp_.Sub("state");
    config.node.checkpoint_direct = direct;
    config.node.checkpoint_streams = 2;
    config.node.checkpoint_compression = Codec::kLz4;
    config.node.checkpoint_keep = 5;
    ASSERT_TRUE(fs::MakeDirs(config.node.work_dir, 0700).ok());
    auto engine = std::make_unique<FakeEngine>();
    auto processes = std::make_unique<FakeProcesses>();
    auto launcher = std::make_unique<FakeLauncher>();
    engine_ = engine.get();
    processes_ = processes.get();
    launcher_ = launcher.get();
    faults_ = std::make_shared<StoreFaults>();
    store_ = std::make_unique<FaultyStore>(config.checkpoint_dir, faults_);
    NodeSeams seams;
    seams.engine = std::move(engine);
    seams.processes = std::move(processes);
    seams.launcher = std::move(launcher);
    seams.open_store = [root = config.checkpoint_dir, faults = faults_](const std::string&) {
      return Result<std::unique_ptr<storage::CheckpointStore>>(
          std::make_unique<FaultyStore>(root, faults));
    };
    node_ = std::make_unique<NodeContext>(config, std::move(seams), std::string(32, 'k'), "node-a",
                                          "4.1");
    RecordWorkload();
  }

  void RecordWorkload() {
    WorkloadSpec spec;
    spec.id = kWorkload;
    spec.label = kLabel;
    spec.argv = {"sleep", "1000"};
    spec.uid = kOwner;
    spec.gid = kOwner;
    spec.stdout_path = tmp_.Sub("out.log");
    ASSERT_TRUE(node_->records().Create(spec).ok());
    WorkloadState state;
    state.status = WorkloadStatus::kRunning;
    state.pid = kPid;
    ASSERT_TRUE(node_->records().SaveState(kWorkload, state).ok());
  }

  Result<DumpOutcome> Dump(bool leave_running = false, std::string compression = "") {
    DumpOptions o;
    o.workload_id = kWorkload;
    o.leave_running = leave_running;
    o.compression = std::move(compression);
    o.reason = "preemption";
    return Checkpointer(*node_).Dump(Caller{}, o, {});
  }

  Result<RestoreOutcome> RestoreLabel() {
    RestoreOptions o;
    o.label = kLabel;
    return Checkpointer(*node_).Restore(Caller{}, o, {});
  }

  // What the store holds of the label: committed checkpoints and uncommitted leftovers.
  size_t Committed() {
    auto refs = store_->List(std::nullopt, std::nullopt);
    return refs.has_value() ? refs->size() : 0;
  }
  size_t Uncommitted() {
    auto refs = store_->ListUncommitted();
    return refs.has_value() ? refs->size() : 0;
  }
  // A dump that failed leaves nothing of itself on the node.
  void ExpectNothingLeftOnNode() {
    auto work = fs::ListDir(node_->config().node.work_dir);
    ASSERT_TRUE(work.has_value());
    EXPECT_TRUE(work->empty()) << work->front();
    auto pending = DumpJournal(node_->config().node.state_dir).Pending();
    ASSERT_TRUE(pending.has_value());
    EXPECT_TRUE(pending->empty());
    EXPECT_FALSE(fs::Exists(node_->records().DumpingMarker(kWorkload)));
  }
  using Actions = std::vector<std::string>;
  static std::string Pid(pid_t pid) { return std::to_string(pid); }

  storage::testing::TempDir tmp_;
  std::shared_ptr<StoreFaults> faults_;
  std::unique_ptr<FaultyStore> store_;  // the node's store, for the tests to look into
  std::unique_ptr<NodeContext> node_;
  FakeEngine* engine_ = nullptr;
  FakeProcesses* processes_ = nullptr;
  FakeLauncher* launcher_ = nullptr;
};

TEST_P(CheckpointerTest, DumpCommitsThenEndsTheTree) {
  Result<DumpOutcome> out = Dump();
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  EXPECT_EQ(Committed(), 1u);
  EXPECT_EQ(Uncommitted(), 0u);
  EXPECT_EQ(out->manifest.reason, "preemption");
  EXPECT_EQ(out->manifest.streams.size(), 2u);
  EXPECT_GE(out->manifest.images_bytes, 300u << 10);
  // Killed only after the commit, and recorded as checkpointed first.
  EXPECT_EQ(processes_->actions(), Actions{"SIGKILL " + Pid(kPid)});
  ASSERT_TRUE(node_->records().LoadEnd(kWorkload).has_value());
  EXPECT_EQ(node_->records().LoadEnd(kWorkload)->checkpoint_id, out->manifest.id);
  ExpectNothingLeftOnNode();
}

TEST_P(CheckpointerTest, LeaveRunningTouchesNoProcess) {
  ASSERT_TRUE(Dump(/*leave_running=*/true).has_value());
  EXPECT_TRUE(processes_->actions().empty());
  EXPECT_FALSE(node_->records().LoadEnd(kWorkload).has_value());
}

// CRIU resumes the tree itself when it fails: nothing to continue, nothing stored.
TEST_P(CheckpointerTest, CriuFailsNothingStoredTreeLeftToCriu) {
  engine_->fail_ = true;
  Result<DumpOutcome> out = Dump();
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message().find("dump failed (fake)"), std::string::npos)
      << out.error().ToString();
  EXPECT_TRUE(processes_->actions().empty());
  EXPECT_EQ(Committed() + Uncommitted(), 0u);
  ExpectNothingLeftOnNode();
  // Its owner sees why in the jobs list.
  auto notice = node_->records().LoadNotice(kWorkload);
  ASSERT_TRUE(notice.has_value());
  EXPECT_NE(notice->text.find("checkpoint on preemption failed"), std::string::npos)
      << notice->text;
}

// The store fails part-way (a full file system): the error is the store's, named as such, and
// whatever was stored goes. A plain dump's CRIU had finished, so the tree is continued; a
// direct dump's CRIU, still writing, fails with its receiver and resumes the tree itself.
TEST_P(CheckpointerTest, StoreFailsMidStream) {
  faults_->fail_after_bytes = 64 << 10;
  engine_->write_until_refused_ = true;
  // Uncompressed, each entry reaches the store as soon as a stream takes it (a codec may hold
  // a block back until the end).
  Result<DumpOutcome> out = Dump(false, "none");
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(
      out.error().message().find("checkpoint dir " + node_->config().checkpoint_dir + " is full"),
      std::string::npos)
      << out.error().ToString();
  EXPECT_EQ(Committed() + Uncommitted(), 0u);
  EXPECT_EQ(processes_->actions(), GetParam() ? Actions{} : Actions{"SIGCONT " + Pid(kPid)});
  ExpectNothingLeftOnNode();
}

TEST_P(CheckpointerTest, CommitFailsTreeContinuedStreamsDeleted) {
  faults_->fail_commit = true;
  Result<DumpOutcome> out = Dump();
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().ToString().find("committing checkpoint"), std::string::npos)
      << out.error().ToString();
  EXPECT_EQ(Committed() + Uncommitted(), 0u);
  EXPECT_EQ(processes_->actions(), Actions{"SIGCONT " + Pid(kPid)});
  EXPECT_FALSE(node_->records().LoadEnd(kWorkload).has_value());
  ExpectNothingLeftOnNode();
}

// A part of a job over several nodes waits stored, still stopped, for the batch node's word
// (daemon/step_parts.h): while it waits nothing is committed and the tree is not touched; a
// word of "no" rolls back as a failed commit does.
TEST_P(CheckpointerTest, BeforeCommitSeesTheStoredTreeAndItsRefusalRollsBack) {
  DumpOptions o;
  o.workload_id = kWorkload;
  std::string seen_id;
  size_t committed_then = 99;
  Actions actions_then{"?"};
  o.before_commit = [&](image::Manifest* m) -> Status {
    seen_id = m->id;
    committed_then = Committed();
    actions_then = processes_->actions();
    return AbortedError("the job's checkpoint was not committed");
  };
  Result<DumpOutcome> out = Checkpointer(*node_).Dump(Caller{}, o, {});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), Code::kAborted) << out.error().ToString();
  EXPECT_FALSE(seen_id.empty());
  EXPECT_EQ(committed_then, 0u);
  EXPECT_EQ(actions_then, Actions{});
  EXPECT_EQ(Committed() + Uncommitted(), 0u);
  EXPECT_EQ(processes_->actions(), Actions{"SIGCONT " + Pid(kPid)});
  ExpectNothingLeftOnNode();

  o.before_commit = [&](image::Manifest*) { return OkStatus(); };
  ASSERT_TRUE(Checkpointer(*node_).Dump(Caller{}, o, {}).has_value());
  EXPECT_EQ(Committed(), 1u);
}

// A restore takes a checkpoint whose parts on other nodes are all committed, and no other.
TEST_P(CheckpointerTest, PartsNamedByAManifestMustBeCommitted) {
  Result<DumpOutcome> part = Dump(/*leave_running=*/true);
  ASSERT_TRUE(part.has_value());
  const nlohmann::json named = {
      {{"parts",
        {{{"label", kLabel}, {"checkpoint_id", part->manifest.id}, {"rank", 1}, {"node", "b"}}}}}};
  EXPECT_TRUE(CheckPartsCommitted(*store_, part->manifest.owner, named).ok());
  const nlohmann::json missing = {{{"parts",
                                    {{{"label", kLabel},
                                      {"checkpoint_id", "20261206-000000-00000000"},
                                      {"rank", 1},
                                      {"node", "b"}}}}}};
  Status s = CheckPartsCommitted(*store_, part->manifest.owner, missing);
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("on node b (task 1"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckPartsCommitted(*store_, part->manifest.owner, nlohmann::json()).ok());
}

// A tree whose connections CRIU locked gets the lock undone before it is continued.
TEST_P(CheckpointerTest, RollbackUndoesTheNetworkLockFirst) {
  engine::TcpConnection internal;
  internal.local = {"127.0.0.1", 5000};
  internal.remote = {"127.0.0.1", 5001};
  internal.internal = true;
  processes_->tcp_.connections = {internal};
  faults_->fail_commit = true;
  ASSERT_FALSE(Dump().has_value());
  EXPECT_EQ(processes_->actions(), (Actions{"unlock " + Pid(kPid), "SIGCONT " + Pid(kPid)}));
}

// A tree that held more than its owner's identity does not become the owner's checkpoint.
TEST_P(CheckpointerTest, PrivilegedTreeRefusedAndContinued) {
  engine_->task_uid_ = 0;
  Result<DumpOutcome> out = Dump();
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), Code::kUnsupported) << out.error().ToString();
  EXPECT_EQ(Committed() + Uncommitted(), 0u);
  EXPECT_EQ(processes_->actions(), Actions{"SIGCONT " + Pid(kPid)});
  auto notice = node_->records().LoadNotice(kWorkload);
  ASSERT_TRUE(notice.has_value());
  EXPECT_NE(notice->text.find("refused"), std::string::npos) << notice->text;
}

// Bad input is refused before anything is touched.
TEST_P(CheckpointerTest, BadOptionsTouchNothing) {
  DumpOptions o;
  o.workload_id = kWorkload;
  o.streams = 65;
  Result<DumpOutcome> out = Checkpointer(*node_).Dump(Caller{}, o, {});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->dumps_, 0);
  o.streams = 0;
  o.compression = "rar";
  EXPECT_EQ(Checkpointer(*node_).Dump(Caller{}, o, {}).error().code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->dumps_, 0);
  EXPECT_TRUE(processes_->actions().empty());
  EXPECT_FALSE(node_->records().LoadNotice(kWorkload).has_value());
  ExpectNothingLeftOnNode();
}

TEST_P(CheckpointerTest, RestoreLaunchesTheNewestCheckpoint) {
  ASSERT_TRUE(Dump(true).has_value());
  Result<DumpOutcome> newest = Dump(true);
  ASSERT_TRUE(newest.has_value());
  Result<RestoreOutcome> r = RestoreLabel();
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->checkpoint_id, newest->manifest.id);
  EXPECT_EQ(r->pid, kPid + 1);
  ASSERT_EQ(launcher_->launched_.size(), 1u);
  const WorkloadSpec& spec = launcher_->launched_[0];
  EXPECT_EQ(spec.restored_from, newest->manifest.id);
  EXPECT_EQ(spec.uid, kOwner);
  EXPECT_EQ(spec.stdout_path, tmp_.Sub("out.log"));
  EXPECT_TRUE(node_->records().LoadSpec(r->workload_id).has_value());
  // The images dir went; the checkpoints stay.
  EXPECT_TRUE(fs::ListDir(node_->config().node.work_dir)->empty());
  EXPECT_EQ(Committed(), 2u);
}

// With a remover (the daemon's housekeeper), a dump and a restore reply before their images dirs
// are unlinked: each is retired, the remover woken, and the work dir's sweep removes it.
TEST_P(CheckpointerTest, ImagesDirsAreRetiredToTheRemover) {
  int wakes = 0;
  node_->SetWorkDirRemover([&] { ++wakes; });
  const std::string work_dir = node_->config().node.work_dir;
  Result<DumpOutcome> dumped = Dump(/*leave_running=*/true);
  ASSERT_TRUE(dumped.has_value()) << dumped.error().ToString();
  const std::string dump_dir = DumpImagesName(dumped->manifest.id);
  EXPECT_EQ(wakes, 1);
  EXPECT_TRUE(fs::Exists(work_dir + "/" + dump_dir)) << "removed before the reply";
  EXPECT_TRUE(node_->WorkDirRetired(dump_dir));
  ASSERT_TRUE(RestoreLabel().has_value());
  EXPECT_EQ(wakes, 2);
  auto left = fs::ListDir(work_dir);
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->size(), 2u) << "the dump's and the restore's images dirs, until the sweep";
  for (const std::string& name : *left) EXPECT_TRUE(node_->WorkDirRetired(name)) << name;

  SweepWorkDir(*node_);
  EXPECT_TRUE(fs::ListDir(work_dir)->empty());
  for (const std::string& name : *left) EXPECT_FALSE(node_->WorkDirRetired(name)) << name;
  // Once the remover is gone, whoever retires a dir removes it.
  node_->SetWorkDirRemover({});
  ASSERT_TRUE(Dump(/*leave_running=*/true).has_value());
  EXPECT_EQ(wakes, 2);
  EXPECT_TRUE(fs::ListDir(work_dir)->empty());
}

// A checkpoint a plain dump made has stream heads, so its restore streams; when CRIU fails on
// the direct restore's images, the same checkpoint is restored once more after a full unpack.
// A direct dump's checkpoint has no heads: it is unpacked first, and restored once.
TEST_P(CheckpointerTest, DirectRestoreFailsThenPlainRetryRuns) {
  ASSERT_TRUE(Dump(true).has_value());
  launcher_->fail_direct_ = true;
  Result<RestoreOutcome> r = RestoreLabel();
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  if (GetParam()) {
    ASSERT_EQ(launcher_->launched_.size(), 1u);
    EXPECT_FALSE(launcher_->launched_[0].direct_restore);
    return;
  }
  ASSERT_EQ(launcher_->launched_.size(), 2u);
  EXPECT_TRUE(launcher_->launched_[0].direct_restore);
  EXPECT_FALSE(launcher_->launched_[1].direct_restore);
  // The failed attempt's workload record is gone; the retry's stays.
  EXPECT_FALSE(node_->records().LoadSpec(launcher_->launched_[0].id).has_value());
  EXPECT_EQ(r->workload_id, launcher_->launched_[1].id);
  EXPECT_TRUE(fs::ListDir(node_->config().node.work_dir)->empty());
}

// A label's newest checkpoint that cannot be restored is skipped for the next older one;
// nothing is deleted.
TEST_P(CheckpointerTest, RestoreFallsBackToAnOlderCheckpoint) {
  Result<DumpOutcome> older = Dump(true);
  ASSERT_TRUE(older.has_value());
  Result<DumpOutcome> newer = Dump(true);
  ASSERT_TRUE(newer.has_value());
  // Its manifest no longer matches its MAC.
  const std::string path = node_->config().checkpoint_dir + "/" + newer->manifest.owner + "/" +
                           kLabel + "/" + newer->manifest.id + "/manifest.json";
  std::string json = *fs::ReadFile(path);
  json.replace(json.find("preemption"), 10, "maintenanc");
  ASSERT_TRUE(fs::WriteFileAtomic(path, json, 0600).ok());
  Result<RestoreOutcome> r = RestoreLabel();
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->checkpoint_id, older->manifest.id);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_EQ(r->skipped[0].rfind(newer->manifest.id, 0), 0u) << r->skipped[0];
  EXPECT_EQ(Committed(), 2u);
}

TEST_P(CheckpointerTest, RestoreThatCannotLaunchLeavesNoRecord) {
  ASSERT_TRUE(Dump(true).has_value());
  launcher_->fail_all_ = true;
  Result<RestoreOutcome> r = RestoreLabel();
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("restore failed (fake)"), std::string::npos)
      << r.error().ToString();
  for (const WorkloadSpec& spec : launcher_->launched_)
    EXPECT_FALSE(node_->records().LoadSpec(spec.id).has_value()) << spec.id;
  EXPECT_EQ(Committed(), 1u);
  EXPECT_TRUE(fs::ListDir(node_->config().node.work_dir)->empty());
}

// The daemon stopped part-way through a dump: the next one finds the journal record. Before
// the commit: what was stored goes and the stopped tree is continued. After it: the stop is
// finished (recorded as checkpointed, then killed).
TEST_P(CheckpointerTest, RecoveryAfterTheDaemonStoppedMidDump) {
  const DumpJournal journal(node_->config().node.state_dir);
  DumpIntent intent{"ck-half", UserName(kOwner), kLabel, kWorkload, kPid,
                    kPidStart, kOwner,           kOwner, false};
  ASSERT_TRUE(journal.Begin(intent).ok());
  storage::CheckpointRef half{intent.owner, kLabel, intent.checkpoint_id};
  ASSERT_TRUE(store_->CheckWritable(intent.owner).ok());
  auto sink = store_->CreateStream(half, 0);
  ASSERT_TRUE(sink.has_value());
  ASSERT_TRUE((*sink)->Write("part", 4).ok());
  ASSERT_TRUE((*sink)->Close().ok());
  ASSERT_EQ(Uncommitted(), 1u);
  RecoverInterruptedOperations(*node_);
  EXPECT_EQ(Uncommitted(), 0u);
  EXPECT_EQ(processes_->actions(), Actions{"SIGCONT " + Pid(kPid)});
  EXPECT_TRUE(journal.Pending()->empty());

  // Committed before the daemon stopped.
  Result<DumpOutcome> out = Dump(/*leave_running=*/true);
  ASSERT_TRUE(out.has_value());
  intent.checkpoint_id = out->manifest.id;
  ASSERT_TRUE(journal.Begin(intent).ok());
  RecoverInterruptedOperations(*node_);
  EXPECT_EQ(processes_->actions(), (Actions{"SIGCONT " + Pid(kPid), "SIGKILL " + Pid(kPid)}));
  ASSERT_TRUE(node_->records().LoadEnd(kWorkload).has_value());
  EXPECT_EQ(Committed(), 1u);
}

// A pid reused by another process is never signalled.
TEST_P(CheckpointerTest, RecoveryLeavesAReusedPidAlone) {
  const DumpJournal journal(node_->config().node.state_dir);
  ASSERT_TRUE(journal
                  .Begin(DumpIntent{"ck-gone", UserName(kOwner), kLabel, kWorkload, kPid,
                                    kPidStart + 1, kOwner, kOwner, false})
                  .ok());
  RecoverInterruptedOperations(*node_);
  EXPECT_TRUE(processes_->actions().empty());
}

INSTANTIATE_TEST_SUITE_P(PlainAndDirect, CheckpointerTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "direct" : "plain"; });

}  // namespace
}  // namespace cedana::daemon
