// The catalog schema, as forward-only migrations. A migration is never edited once released:
// changes come as a new entry. "{{id}}" is an auto-increment primary key in either dialect.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/log.h"
#include "controller/catalog/database.h"

namespace cedana::controller {
namespace {

struct Migration {
  int version;
  const char* what;
  const char* sql;
};

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> all = {
      {1, "tokens, nodes, jobs, checkpoints, policies, operations", R"(
CREATE TABLE tokens (
  id {{id}},
  hash TEXT NOT NULL UNIQUE,
  user_name TEXT NOT NULL,
  is_admin BIGINT NOT NULL DEFAULT 0,
  created_ms BIGINT NOT NULL
);
CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  version TEXT NOT NULL DEFAULT '',
  last_seen_ms BIGINT NOT NULL
);
CREATE TABLE jobs (
  job_id BIGINT PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '',
  user_name TEXT NOT NULL DEFAULT '',
  partition_name TEXT NOT NULL DEFAULT '',
  node TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT '',
  start_time BIGINT NOT NULL DEFAULT 0,
  updated_ms BIGINT NOT NULL
);
CREATE TABLE managed_jobs (
  job_id BIGINT PRIMARY KEY,
  agent_node TEXT NOT NULL,
  label TEXT NOT NULL,
  user_name TEXT NOT NULL,
  status TEXT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE TABLE checkpoints (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  label TEXT NOT NULL,
  job_id BIGINT,
  node TEXT NOT NULL DEFAULT '',
  created_ms BIGINT NOT NULL,
  size BIGINT NOT NULL DEFAULT 0,
  image_size BIGINT NOT NULL DEFAULT 0,
  codec TEXT NOT NULL DEFAULT '',
  streams BIGINT NOT NULL DEFAULT 1,
  state TEXT NOT NULL,
  location TEXT NOT NULL,
  policy_id BIGINT,
  manifest TEXT NOT NULL DEFAULT ''
);
CREATE INDEX checkpoints_by_label ON checkpoints (owner, label, created_ms);
CREATE TABLE policies (
  id {{id}},
  name TEXT NOT NULL UNIQUE,
  interval_seconds BIGINT NOT NULL,
  enabled BIGINT NOT NULL DEFAULT 1,
  selector TEXT NOT NULL DEFAULT '{}',
  max_checkpoints BIGINT,
  owner TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  last_run_ms BIGINT
);
CREATE TABLE operations (
  id {{id}},
  kind TEXT NOT NULL,
  job_id BIGINT,
  checkpoint_id TEXT,
  node TEXT NOT NULL,
  policy_id BIGINT,
  owner TEXT NOT NULL,
  state TEXT NOT NULL,
  phase TEXT NOT NULL DEFAULT '',
  done_bytes BIGINT NOT NULL DEFAULT 0,
  total_bytes BIGINT NOT NULL DEFAULT 0,
  error TEXT,
  created_ms BIGINT NOT NULL,
  finished_ms BIGINT
);
CREATE INDEX operations_by_state ON operations (state, node);
)"},
      {2, "policies remember whether an admin token created them", R"(
ALTER TABLE policies ADD COLUMN owner_is_admin BIGINT NOT NULL DEFAULT 0;
)"},
      {3, "maintenance windows (MAINT reservations) and the jobs they moved", R"(
CREATE TABLE maintenance_windows (
  name TEXT PRIMARY KEY,
  nodes TEXT NOT NULL,
  start_time BIGINT NOT NULL,
  end_time BIGINT NOT NULL,
  max_start_delay BIGINT NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  warnings TEXT NOT NULL DEFAULT '',
  updated_ms BIGINT NOT NULL
);
CREATE TABLE maintenance_moves (
  id {{id}},
  window_name TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  user_name TEXT NOT NULL,
  action TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  at_ms BIGINT NOT NULL
);
CREATE INDEX maintenance_moves_window ON maintenance_moves (window_name);
)"},
      {4, "checkpoints say whether their run has finished (lineages)", R"(
ALTER TABLE checkpoints ADD COLUMN run TEXT NOT NULL DEFAULT 'open';
)"},
      {5,
       "checkpoints say why they were taken and how long the job was frozen; jobs say what went "
       "wrong",
       R"(
ALTER TABLE checkpoints ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN restart_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN frozen_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN duration_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE operations ADD COLUMN reason TEXT NOT NULL DEFAULT 'manual';
CREATE TABLE job_notices (
  job_id BIGINT PRIMARY KEY,
  text TEXT NOT NULL,
  at_ms BIGINT NOT NULL
);
)"},
      {6, "a job's life as events: submitted, each start, preemption, requeue and end", R"(
CREATE TABLE job_events (
  job_id BIGINT NOT NULL,
  kind TEXT NOT NULL,
  run_index BIGINT NOT NULL,
  at_ms BIGINT NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, kind, run_index)
);
)"},
      {7, "operations keep how long each phase of their dump or restore took", R"(
ALTER TABLE operations ADD COLUMN phases TEXT NOT NULL DEFAULT '[]';
)"},
  };
  return all;
}

std::string Dialect(std::string sql, const std::string& driver) {
  const std::string id =
      driver == "postgres" ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT";
  for (size_t pos; (pos = sql.find("{{id}}")) != std::string::npos;) sql.replace(pos, 6, id);
  return sql;
}

}  // namespace

int LatestSchemaVersion() { return Migrations().back().version; }

Status Migrate(Database& db) {
  CEDANA_RETURN_IF_ERROR(
      db.Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
              "applied_ms BIGINT NOT NULL)"));
  CEDANA_ASSIGN_OR_RETURN(auto rows,
                          db.Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  int64_t current = rows.empty() ? 0 : rows[0].Int(0);
  if (current > LatestSchemaVersion()) {
    return FailedPreconditionError(fmt::format(
        "the catalog database has schema version {}, newer than this cedana-slurm knows ({}); "
        "run a newer cedana-slurm",
        current, LatestSchemaVersion()));
  }
  for (const Migration& m : Migrations()) {
    if (m.version <= current) continue;
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    std::string sql =
        Dialect(m.sql, db.Driver()) +
        fmt::format("\nINSERT INTO schema_migrations (version, applied_ms) VALUES ({}, {});",
                    m.version, now);
    CEDANA_RETURN_IF_ERROR(db.ExecScript(sql))
        << "catalog migration " << m.version << " (" << m.what << ")";
    log::Info("catalog: migrated the {} database to schema version {} ({})", db.Driver(), m.version,
              m.what);
  }
  return OkStatus();
}

}  // namespace cedana::controller
