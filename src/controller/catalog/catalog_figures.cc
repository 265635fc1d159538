// The catalog's figures for /metrics: counts and sizes, read in one transaction so that they
// agree with each other.
#include "controller/catalog/catalog.h"

namespace cedana::controller {

Result<CatalogFigures> Catalog::Figures(int64_t recent_since_ms) {
  CatalogFigures f;
  Status read = db_->Transaction([&]() -> Status {
    CEDANA_ASSIGN_OR_RETURN(
        auto checkpoints,
        db_->Query("SELECT reason, size, duration_ms, frozen_ms FROM checkpoints"));
    for (const SqlRow& r : checkpoints)
      f.checkpoints.push_back({r.Text(0), r.Int(1), r.Int(2), r.Int(3)});
    CEDANA_ASSIGN_OR_RETURN(
        auto operations,
        db_->Query(
            "SELECT kind, state, reason, COUNT(*) FROM operations GROUP BY kind, state, reason"));
    for (const SqlRow& r : operations)
      f.operations.push_back({r.Text(0), r.Text(1), r.Text(2), r.Int(3)});
    CEDANA_ASSIGN_OR_RETURN(
        auto finished, db_->Query("SELECT kind, state, finished_ms - created_ms FROM operations "
                                  "WHERE finished_ms IS NOT NULL"));
    for (const SqlRow& r : finished) f.finished.push_back({r.Text(0), r.Text(1), r.Int(2)});
    CEDANA_ASSIGN_OR_RETURN(
        auto managed, db_->Query("SELECT status, COUNT(*) FROM managed_jobs GROUP BY status"));
    for (const SqlRow& r : managed) f.managed_jobs.emplace_back(r.Text(0), r.Int(1));
    CEDANA_ASSIGN_OR_RETURN(
        auto nodes,
        db_->Query(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN last_seen_ms >= ? THEN 1 ELSE 0 END), 0) "
            "FROM nodes",
            {recent_since_ms}));
    f.nodes = nodes.at(0).Int(0);
    f.nodes_recent = nodes.at(0).Int(1);
    return OkStatus();
  });
  CEDANA_RETURN_IF_ERROR(read);
  return f;
}

}  // namespace cedana::controller
