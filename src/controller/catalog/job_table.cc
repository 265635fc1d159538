#include "controller/catalog/job_table.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>

namespace cedana::controller {
namespace {

constexpr char kJobColumns[] =
    "j.job_id, j.name, j.user_name, j.partition_name, j.node, j.state, j.start_time, "
    "m.label, m.agent_node, n.text, n.at_ms";
// Every job query: its managed workload (if any) and its notice (if any).
constexpr char kJobJoins[] =
    "jobs j LEFT JOIN managed_jobs m ON m.job_id = j.job_id LEFT JOIN job_notices n ON n.job_id = "
    "j.job_id";

JobRecord JobOf(const SqlRow& r) {
  JobRecord j;
  j.job_id = r.Int(0);
  j.name = r.Text(1);
  j.user = r.Text(2);
  j.partition = r.Text(3);
  j.node = r.Text(4);
  j.state = r.Text(5);
  j.start_time = r.Int(6);
  j.enabled = r.cells[7].has_value();
  j.label = r.Text(7);
  j.agent_node = r.Text(8);
  j.notice = r.Text(9);
  j.notice_at_ms = r.OptionalInt(10).value_or(0);
  return j;
}

}  // namespace

int64_t JobTable::NextStamp() {
  int64_t now = NowMs(), last = last_stamp_.load();
  int64_t next;
  do {
    next = std::max(now, last + 1);
  } while (!last_stamp_.compare_exchange_weak(last, next));
  return next;
}

Status JobTable::Upsert(const JobRecord& j, int64_t stamp) {
  return db_.Exec(
      "INSERT INTO jobs (job_id, name, user_name, partition_name, node, state, start_time, "
      "updated_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET name = excluded.name, "
      "user_name = excluded.user_name, partition_name = excluded.partition_name, node = "
      "excluded.node, "
      "state = excluded.state, start_time = excluded.start_time, updated_ms = excluded.updated_ms",
      {j.job_id, j.name, j.user, j.partition, j.node, j.state, j.start_time, stamp});
}

Status JobTable::Sync(const std::vector<JobRecord>& jobs) {
  return db_.Transaction([&]() -> Status {
    int64_t now = NextStamp();
    for (const JobRecord& j : jobs) CEDANA_RETURN_IF_ERROR(Upsert(j, now));
    CEDANA_RETURN_IF_ERROR(db_.Exec("DELETE FROM jobs WHERE updated_ms < ?", {now}));
    CEDANA_RETURN_IF_ERROR(
        db_.Exec("DELETE FROM job_notices WHERE job_id NOT IN (SELECT job_id FROM jobs)"));
    return db_.Exec("DELETE FROM job_events WHERE job_id NOT IN (SELECT job_id FROM jobs)");
  });
}

Status JobTable::Update(const std::vector<JobRecord>& changed,
                        const std::vector<int64_t>& removed) {
  if (changed.empty() && removed.empty()) return OkStatus();
  return db_.Transaction([&]() -> Status {
    int64_t now = NextStamp();
    for (const JobRecord& j : changed) CEDANA_RETURN_IF_ERROR(Upsert(j, now));
    for (int64_t id : removed)
      for (const char* table : {"jobs", "job_notices", "job_events"})
        CEDANA_RETURN_IF_ERROR(
            db_.Exec(fmt::format("DELETE FROM {} WHERE job_id = ?", table), {id}));
    return OkStatus();
  });
}

Status JobTable::SyncManaged(const std::string& agent_node, const std::vector<ManagedJob>& jobs) {
  return db_.Transaction([&]() -> Status {
    int64_t now = NextStamp();
    for (const ManagedJob& m : jobs) {
      CEDANA_RETURN_IF_ERROR(db_.Exec(
          "INSERT INTO managed_jobs (job_id, agent_node, label, user_name, status, updated_ms) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET agent_node = "
          "excluded.agent_node, "
          "label = excluded.label, user_name = excluded.user_name, status = excluded.status, "
          "updated_ms = excluded.updated_ms",
          {m.job_id, agent_node, m.label, m.user, m.status, now}));
      // The newest notice of the job stays after its workload is gone (a requeue starts another).
      if (!m.notice.empty())
        CEDANA_RETURN_IF_ERROR(
            db_.Exec("INSERT INTO job_notices (job_id, text, at_ms) VALUES (?, ?, ?) ON CONFLICT "
                     "(job_id) DO UPDATE "
                     "SET text = excluded.text, at_ms = excluded.at_ms WHERE excluded.at_ms > "
                     "job_notices.at_ms",
                     {m.job_id, m.notice, m.notice_at_ms}));
    }
    return db_.Exec("DELETE FROM managed_jobs WHERE agent_node = ? AND updated_ms < ?",
                    {agent_node, now});
  });
}

Result<std::vector<JobRecord>> JobTable::List(const std::optional<std::string>& user) {
  CEDANA_ASSIGN_OR_RETURN(Paged<JobRecord> all, ListPage({user, std::nullopt, std::nullopt}, {}));
  return std::move(all.items);
}

Result<Paged<JobRecord>> JobTable::ListPage(const JobFilter& f, const PageRequest& page) {
  std::string sql = fmt::format("SELECT {} FROM {} WHERE 1 = 1", kJobColumns, kJobJoins);
  std::vector<SqlValue> params;
  AndEquals(&sql, &params, "j.user_name", f.user);
  AndEquals(&sql, &params, "j.state", f.state);
  if (f.enabled) sql += *f.enabled ? " AND m.job_id IS NOT NULL" : " AND m.job_id IS NULL";
  if (!page.after.empty()) {
    int64_t after = 0;
    auto [end, ec] =
        std::from_chars(page.after.data(), page.after.data() + page.after.size(), after);
    if (ec != std::errc() || end != page.after.data() + page.after.size())
      return InvalidArgumentError(fmt::format(
          "after \"{}\" is not a job id (give the X-Next-After of the page before)", page.after));
    sql += " AND j.job_id < ?";
    params.push_back(after);
  }
  sql += " ORDER BY j.job_id DESC" + PageLimitSql(page);
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(sql, params));
  std::vector<JobRecord> items;
  for (const auto& r : rows) items.push_back(JobOf(r));
  return PageOf(std::move(items), page,
                [](const JobRecord& j) { return std::to_string(j.job_id); });
}

Result<JobRecord> JobTable::Get(int64_t job_id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(fmt::format("SELECT {} FROM {} WHERE j.job_id = ?",
                                                           kJobColumns, kJobJoins),
                                               {job_id}));
  if (rows.empty()) return NotFoundError(fmt::format("job {} not found", job_id));
  return JobOf(rows[0]);
}

}  // namespace cedana::controller
