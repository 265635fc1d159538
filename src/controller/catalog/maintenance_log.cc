// The catalog's maintenance windows and the moves they made (migration 3).
#include "controller/catalog/maintenance_log.h"

namespace cedana::controller {

Status MaintenanceLog::UpsertWindow(const WindowRecord& w) {
  return db_.Exec(
      "INSERT INTO maintenance_windows (name, nodes, start_time, end_time, max_start_delay, "
      "status, "
      "warnings, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
      "nodes = excluded.nodes, start_time = excluded.start_time, end_time = excluded.end_time, "
      "max_start_delay = excluded.max_start_delay, status = excluded.status, "
      "warnings = excluded.warnings, updated_ms = excluded.updated_ms",
      {w.name, w.nodes, w.start_time, w.end_time, w.max_start_delay, w.status, w.warnings,
       NowMs()});
}

Result<std::vector<WindowRecord>> MaintenanceLog::ListWindows() {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query("SELECT name, nodes, start_time, end_time, max_start_delay, status, warnings "
                "FROM maintenance_windows ORDER BY start_time DESC, name"));
  std::vector<WindowRecord> out;
  for (const auto& r : rows)
    out.push_back({r.Text(0), r.Text(1), r.Int(2), r.Int(3), r.Int(4), r.Text(5), r.Text(6)});
  return out;
}

Status MaintenanceLog::AddMove(const MoveRecord& m) {
  return db_.Exec(
      "INSERT INTO maintenance_moves (window_name, job_id, user_name, action, detail, at_ms) "
      "VALUES (?, ?, ?, ?, ?, ?)",
      {m.window, m.job_id, m.user, m.action, m.detail, m.at_ms != 0 ? m.at_ms : NowMs()});
}

Result<std::vector<MoveRecord>> MaintenanceLog::ListMoves(const std::optional<std::string>& user) {
  std::string sql =
      "SELECT id, window_name, job_id, user_name, action, detail, at_ms FROM maintenance_moves";
  std::vector<SqlValue> params;
  if (user.has_value()) {
    sql += " WHERE user_name = ?";
    params.push_back(*user);
  }
  sql += " ORDER BY at_ms, id";
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(sql, params));
  std::vector<MoveRecord> out;
  for (const auto& r : rows)
    out.push_back({r.Int(0), r.Text(1), r.Int(2), r.Text(3), r.Text(4), r.Text(5), r.Int(6)});
  return out;
}

}  // namespace cedana::controller
