#include "controller/catalog/job_event_log.h"

namespace cedana::controller {
namespace {

// Inserts each event; `on_conflict` says what an event already kept for its key becomes.
Status Insert(Database& db, const std::vector<JobEvent>& events, const std::string& on_conflict) {
  const std::string sql =
      "INSERT INTO job_events (job_id, kind, run_index, at_ms, detail, checkpoint_id) VALUES (?, "
      "?, ?, ?, ?, ?) "
      "ON CONFLICT (job_id, kind, run_index) " +
      on_conflict;
  for (const JobEvent& e : events)
    CEDANA_RETURN_IF_ERROR(
        db.Exec(sql, {e.job_id, e.kind, e.run, e.at_ms, e.detail, e.checkpoint_id}));
  return OkStatus();
}

}  // namespace

Status JobEventLog::Record(const std::vector<JobEvent>& events) {
  return Insert(db_, events, "DO NOTHING");
}

Status JobEventLog::RecordRunStarts(const std::vector<JobEvent>& starts) {
  // slurmctld's start time stays when it came first: it is the run's start, the node daemon's
  // is when the workload began (after a restore).
  return Insert(db_, starts,
                "DO UPDATE SET detail = excluded.detail, checkpoint_id = excluded.checkpoint_id");
}

Result<std::vector<JobEvent>> JobEventLog::List(int64_t job_id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query("SELECT job_id, kind, run_index, at_ms, detail, "
                                               "checkpoint_id FROM job_events WHERE job_id = ? "
                                               "ORDER BY at_ms, run_index",
                                               {job_id}));
  std::vector<JobEvent> out;
  for (const auto& r : rows) {
    JobEvent e;
    e.job_id = r.Int(0);
    e.kind = r.Text(1);
    e.run = r.Int(2);
    e.at_ms = r.Int(3);
    e.detail = r.Text(4);
    e.checkpoint_id = r.Text(5);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace cedana::controller
