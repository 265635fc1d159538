#include "controller/catalog/catalog.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cedana::controller {
namespace {

std::unique_ptr<Catalog> MemoryCatalog() {
  auto db = OpenDatabase("sqlite::memory:");
  EXPECT_TRUE(db.has_value()) << db.error().ToString();
  EXPECT_TRUE(Migrate(**db).ok());
  return std::make_unique<Catalog>(std::move(db).value());
}

TEST(CatalogTest, MigrationsRunOnceAndRefuseNewerSchemas) {
  auto db = OpenDatabase("sqlite::memory:");
  ASSERT_TRUE(db.has_value());
  ASSERT_TRUE(Migrate(**db).ok());
  ASSERT_TRUE(Migrate(**db).ok());  // again: nothing to do
  auto rows = (*db)->Query("SELECT COUNT(*) FROM schema_migrations");
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->at(0).Int(0), LatestSchemaVersion());
  ASSERT_TRUE((*db)->Exec("INSERT INTO schema_migrations VALUES (999, 0)").ok());
  Status s = Migrate(**db);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("newer"), std::string::npos);
}

// A statement that fails is our bug, not the caller's: kInternal, naming the statement.
TEST(CatalogTest, AFailedStatementIsInternalAndNamesIt) {
  auto db = OpenDatabase("sqlite::memory:");
  ASSERT_TRUE(db.has_value());
  ASSERT_TRUE(Migrate(**db).ok());
  auto prepared = (*db)->Query("SELECT no_such_column FROM tokens");
  ASSERT_FALSE(prepared.has_value());
  EXPECT_EQ(prepared.error().code(), Code::kInternal);
  EXPECT_NE(prepared.error().message().find("no_such_column"), std::string::npos);
  auto stepped = (*db)->Query("INSERT INTO tokens (hash) VALUES (NULL)");  // NOT NULL columns
  ASSERT_FALSE(stepped.has_value());
  EXPECT_EQ(stepped.error().code(), Code::kInternal) << stepped.error().ToString();
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// The catalog holds token hashes and every checkpoint's metadata: only its owner reads it, also
// when the file was made before (by an older version, or by hand with the umask's mode).
TEST(CatalogTest, SqliteFileIsOwnerOnly) {
  char dir_template[] = "/tmp/cedana-catalog-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  {
    auto db = OpenDatabase("sqlite://" + dir + "/new.db");
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
    ASSERT_TRUE(Migrate(**db).ok());
  }
  EXPECT_EQ(ModeOf(dir + "/new.db"), 0600u);
  std::ofstream(dir + "/old.db").close();
  ASSERT_EQ(::chmod((dir + "/old.db").c_str(), 0644), 0);
  {
    auto db = OpenDatabase("sqlite://" + dir + "/old.db");
    ASSERT_TRUE(db.has_value()) << db.error().ToString();
  }
  EXPECT_EQ(ModeOf(dir + "/old.db"), 0600u);
  for (const char* f :
       {"/new.db", "/new.db-wal", "/new.db-shm", "/old.db", "/old.db-wal", "/old.db-shm"})
    ::unlink((dir + f).c_str());
  ::rmdir(dir.c_str());
}

TEST(CatalogTest, BadDatabaseUrlsSayWhatIsValid) {
  auto db = OpenDatabase("mysql://x");
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code(), Code::kInvalidArgument);
  EXPECT_NE(db.error().message().find("postgresql://"), std::string::npos);
}

TEST(CatalogTest, TokensAreStoredHashed) {
  auto c = MemoryCatalog();
  auto t = c->tokens().Create("alice", false);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->second.rfind("cdn_", 0), 0u);
  auto rows = c->db().Query("SELECT hash FROM tokens");
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->at(0).Text(0).find(t->second), std::string::npos);
  auto found = c->tokens().Find(t->second);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->user, "alice");
  EXPECT_FALSE(found->admin);
  EXPECT_EQ(c->tokens().Find("cdn_nope").error().code(), Code::kNotFound);
  EXPECT_TRUE(c->tokens().Delete(t->first).ok());
  EXPECT_EQ(c->tokens().Find(t->second).error().code(), Code::kNotFound);
  EXPECT_EQ(c->tokens().Delete(t->first).code(), Code::kNotFound);
}

TEST(CatalogTest, PoliciesHaveUniqueNames) {
  auto c = MemoryCatalog();
  PolicyRecord p;
  p.name = "hourly";
  p.interval_seconds = 3600;
  p.owner = "alice";
  p.selector.label = "train";
  auto created = c->policies().Create(p);
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  EXPECT_EQ(created->selector.label, "train");
  EXPECT_EQ(c->policies().Create(p).error().code(), Code::kAlreadyExists);
  created->interval_seconds = 60;
  ASSERT_TRUE(c->policies().Update(*created).ok());
  EXPECT_EQ(c->policies().Get(created->id)->interval_seconds, 60);
  EXPECT_EQ(c->policies().List(std::string("bob"))->size(), 0u);
  ASSERT_TRUE(c->policies().Delete(created->id).ok());
  EXPECT_EQ(c->policies().Get(created->id).error().code(), Code::kNotFound);
}

TEST(CatalogTest, JobsJoinWhatNodeDaemonsManage) {
  auto c = MemoryCatalog();
  ASSERT_TRUE(c->jobs().Sync({{7, "victim", "alice", "high", "compute-01", "RUNNING", 1}}).ok());
  ASSERT_TRUE(c->jobs()
                  .Sync({{7, "victim", "alice", "high", "compute-01", "RUNNING", 1},
                         {8, "other", "bob", "low", "compute-01", "PENDING", 0}})
                  .ok());
  ASSERT_TRUE(c->jobs().SyncManaged("node-a", {{7, "my-label", "alice", "running"}}).ok());
  auto jobs = c->jobs().List(std::nullopt);
  ASSERT_TRUE(jobs.has_value());
  ASSERT_EQ(jobs->size(), 2u);
  auto j7 = c->jobs().Get(7);
  ASSERT_TRUE(j7.has_value());
  EXPECT_TRUE(j7->enabled);
  EXPECT_EQ(j7->label, "my-label");
  EXPECT_EQ(j7->agent_node, "node-a");
  EXPECT_FALSE(c->jobs().Get(8)->enabled);
  EXPECT_EQ(c->jobs().List(std::string("bob"))->size(), 1u);
  EXPECT_EQ(j7->notice, "");
  ASSERT_TRUE(c->jobs().Sync({}).ok());  // jobs slurmctld forgot are gone
  EXPECT_EQ(c->jobs().Get(7).error().code(), Code::kNotFound);
}

TEST(CatalogTest, AJobKeepsItsNewestNoticeAfterItsWorkloadIsGone) {
  auto c = MemoryCatalog();
  ASSERT_TRUE(c->jobs().Sync({{7, "victim", "alice", "high", "compute-01", "RUNNING", 1}}).ok());
  ManagedJob refused{7, "l", "alice", "running", "checkpoint on preemption refused: TCP", 2000};
  ASSERT_TRUE(c->jobs().SyncManaged("node-a", {refused}).ok());
  EXPECT_EQ(c->jobs().Get(7)->notice, "checkpoint on preemption refused: TCP");
  EXPECT_EQ(c->jobs().Get(7)->notice_at_ms, 2000);
  ManagedJob older = refused;  // a report that crossed a newer one
  older.notice = "started fresh";
  older.notice_at_ms = 1000;
  ASSERT_TRUE(c->jobs().SyncManaged("node-a", {older}).ok());
  EXPECT_EQ(c->jobs().Get(7)->notice, "checkpoint on preemption refused: TCP");
  ASSERT_TRUE(c->jobs().SyncManaged("node-a", {}).ok());  // requeued: no workload now
  EXPECT_FALSE(c->jobs().Get(7)->enabled);
  EXPECT_EQ(c->jobs().List(std::nullopt)->at(0).notice, "checkpoint on preemption refused: TCP");
  ASSERT_TRUE(c->jobs().Sync({}).ok());
  ASSERT_TRUE(c->jobs().Sync({{7, "victim", "alice", "high", "compute-01", "RUNNING", 1}}).ok());
  EXPECT_EQ(c->jobs().Get(7)->notice, "");  // gone with the job
}

TEST(CatalogTest, AJobsEventsAreKeptOnceAndGoWithTheJob) {
  auto c = MemoryCatalog();
  ASSERT_TRUE(c->jobs().Sync({{7, "victim", "alice", "high", "compute-01", "RUNNING", 1}}).ok());
  JobEvent started{7, "started", 1, 5000, "", ""};
  ASSERT_TRUE(c->job_events().Record({{7, "submitted", 0, 1000, "", ""}, started}).ok());
  started.at_ms = 9000;  // the next look says it again: the first stays
  ASSERT_TRUE(c->job_events().Record({started}).ok());
  // The node daemon says which checkpoint run 1 resumed from; slurmctld's start time stays.
  ASSERT_TRUE(c->job_events().RecordRunStarts({{7, "started", 1, 6000, "resumed", "ck-1"}}).ok());
  auto events = c->job_events().List(7);
  ASSERT_TRUE(events.has_value()) << events.error().ToString();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(events->at(0).kind, "submitted");
  EXPECT_EQ(events->at(1).at_ms, 5000);
  EXPECT_EQ(events->at(1).detail, "resumed");
  EXPECT_EQ(events->at(1).checkpoint_id, "ck-1");
  // A start the node daemon reported first is recorded at its time.
  ASSERT_TRUE(c->job_events().RecordRunStarts({{7, "started", 2, 20000, "fresh", ""}}).ok());
  EXPECT_EQ(c->job_events().List(7)->back().at_ms, 20000);
  ASSERT_TRUE(c->jobs().Sync({}).ok());
  EXPECT_TRUE(c->job_events().List(7)->empty());
}

TEST(CatalogTest, OperationsAreClaimedOnce) {
  auto c = MemoryCatalog();
  OperationRecord op;
  op.kind = OperationKind::kDump;
  op.job_id = 7;
  op.node = "node-a";
  op.owner = "alice";
  op.reason = "policy";
  auto created = c->operations().Create(op);
  ASSERT_TRUE(created.has_value()) << created.error().ToString();
  EXPECT_EQ(created->state, OperationState::kQueued);
  EXPECT_EQ(created->kind, OperationKind::kDump);
  EXPECT_EQ(created->reason, "policy");
  EXPECT_EQ(c->operations().Claim("node-b")->size(), 0u);
  auto claimed = c->operations().Claim("node-a");
  ASSERT_EQ(claimed->size(), 1u);
  EXPECT_EQ(claimed->at(0).state, OperationState::kRunning);
  EXPECT_EQ(c->operations().Claim("node-a")->size(), 0u);
  OperationRecord done = claimed->at(0);
  done.state = OperationState::kDone;
  done.checkpoint_id = "20261130-000000-aaaa";
  done.phases_ms = {{"queue", 0}, {"freeze", 412}, {"store", 1030}};
  ASSERT_TRUE(c->operations().Update(done).ok());
  auto last = c->operations().LastDump(7, std::nullopt);
  ASSERT_TRUE(last.has_value() && last->has_value());
  EXPECT_EQ((*last)->checkpoint_id.value_or(""), "20261130-000000-aaaa");
  EXPECT_EQ((*last)->state, OperationState::kDone);
  auto finished = c->operations().List(std::nullopt, OperationState::kDone, 10);
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->size(), 1u);
  EXPECT_TRUE(c->operations().List(std::nullopt, OperationState::kQueued, 10)->empty());
  EXPECT_TRUE((*last)->finished_ms.has_value());
  EXPECT_EQ((*last)->phases_ms, done.phases_ms) << "phases kept in order";
}

TEST(CatalogTest, CheckpointIndexFollowsStorage) {
  auto c = MemoryCatalog();
  CheckpointRecord a{
      "20261130-000001-aaaa", "alice", "l", 7, "n", 1000, 10, 20, "zstd", 1, "good", "/x",
      std::nullopt,           "{}"};
  a.reason = "preemption";
  a.restart_count = 2;
  a.frozen_ms = 1500;
  a.duration_ms = 2500;
  CheckpointRecord b = a;
  b.id = "20261130-000002-bbbb";
  b.created_ms = 2000;
  ASSERT_TRUE(c->checkpoints().Sync({a, b}).ok());
  ASSERT_TRUE(c->checkpoints().SetPolicy(a.id, 3).ok());
  auto list = c->checkpoints().List({});
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at(0).id, b.id);  // newest first
  ASSERT_TRUE(c->checkpoints().Sync({a}).ok());
  list = c->checkpoints().List({std::string("alice"), std::string("l"), 7});
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->at(0).policy_id.value_or(0), 3);  // kept across syncs
  EXPECT_EQ(list->at(0).reason, "preemption");
  EXPECT_EQ(list->at(0).restart_count, 2);
  EXPECT_EQ(list->at(0).frozen_ms, 1500);
  EXPECT_EQ(list->at(0).duration_ms, 2500);
  EXPECT_EQ(c->checkpoints().Get(b.id).error().code(), Code::kNotFound);
}

// Keyset pages: every checkpoint once, in the whole list's order, also where several share a
// creation time; a page added in front does not shift the later ones.
TEST(CatalogTest, CheckpointPagesFollowOneAnotherWithoutGapsOrRepeats) {
  auto c = MemoryCatalog();
  std::vector<CheckpointRecord> all;
  for (int i = 0; i < 7; ++i) {
    CheckpointRecord r{fmt::format("2026-{:02}", i),
                       "alice",
                       "l",
                       7,
                       "n",
                       1000 + i / 3,
                       10,
                       20,
                       "zstd",
                       1,
                       "good",
                       "/x",
                       std::nullopt,
                       "{}"};
    all.push_back(r);
  }
  ASSERT_TRUE(c->checkpoints().Sync(all).ok());
  std::vector<std::string> whole, paged;
  auto listed = c->checkpoints().List({});
  ASSERT_TRUE(listed.has_value());
  for (const auto& r : *listed) whole.push_back(r.id);
  PageRequest page{3, ""};
  Result<Paged<CheckpointRecord>> p = c->checkpoints().ListPage({}, page);
  ASSERT_TRUE(p.has_value());
  // A newer checkpoint indexed between two pages belongs to the first page, not the next.
  ASSERT_TRUE(c->checkpoints()
                  .Update({CheckpointRecord{"2027-00", "alice", "l", 7, "n", 5000, 10, 20, "zstd",
                                            1, "good", "/x", std::nullopt, "{}"}},
                          {})
                  .ok());
  for (int pages = 1;; ++pages) {
    ASSERT_LE(p->items.size(), 3u);
    for (const auto& r : p->items) paged.push_back(r.id);
    if (p->next.empty()) break;
    ASSERT_LT(pages, 5);
    page.after = p->next;
    p = c->checkpoints().ListPage({}, page);
    ASSERT_TRUE(p.has_value()) << p.error().ToString();
  }
  EXPECT_EQ(paged, whole);
  EXPECT_EQ(c->checkpoints().ListPage({}, {3, "1000"}).error().code(), Code::kInvalidArgument);
  EXPECT_EQ(c->checkpoints().ListPage({}, {3, "x.2026-01"}).error().code(), Code::kInvalidArgument);
}

TEST(CatalogTest, JobPagesAndFiltersInTheQuery) {
  auto c = MemoryCatalog();
  std::vector<JobRecord> jobs;
  for (int64_t id = 1; id <= 5; ++id) {
    JobRecord j;
    j.job_id = id;
    j.user = "alice";
    j.state = id % 2 ? "RUNNING" : "PENDING";
    jobs.push_back(j);
  }
  ASSERT_TRUE(c->jobs().Sync(jobs).ok());
  auto p = c->jobs().ListPage({std::nullopt, std::string("RUNNING"), std::nullopt}, {2, ""});
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->items.size(), 2u);
  EXPECT_EQ(p->items[0].job_id, 5);
  EXPECT_EQ(p->items[1].job_id, 3);
  EXPECT_EQ(p->next, "3");
  p = c->jobs().ListPage({std::nullopt, std::string("RUNNING"), std::nullopt}, {2, p->next});
  ASSERT_EQ(p->items.size(), 1u);
  EXPECT_EQ(p->items[0].job_id, 1);
  EXPECT_EQ(p->next, "");
  EXPECT_TRUE(
      c->jobs().ListPage({std::nullopt, std::nullopt, true}, {})->items.empty());  // none managed
  // Only what changed: job 2 ends, job 6 arrives, 4 is left as it was.
  JobRecord six = jobs[0];
  six.job_id = 6;
  ASSERT_TRUE(c->jobs().Update({six}, {2}).ok());
  std::vector<int64_t> ids;
  auto listed = c->jobs().List(std::nullopt);
  ASSERT_TRUE(listed.has_value());
  for (const auto& j : *listed) ids.push_back(j.job_id);
  EXPECT_EQ(ids, (std::vector<int64_t>{6, 5, 4, 3, 1}));
}

}  // namespace
}  // namespace cedana::controller
