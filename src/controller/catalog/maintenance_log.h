// Maintenance windows (MAINT reservations, controller/maintenance/) and what each did to
// the jobs on its nodes. Thread-safe (Database is).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class MaintenanceLog {
 public:
  explicit MaintenanceLog(Database& db) : db_(db) {}

  Status UpsertWindow(const WindowRecord& w);
  Result<std::vector<WindowRecord>> ListWindows();  // newest start first
  Status AddMove(const MoveRecord& m);
  // Every move, or only those of one user's jobs.
  Result<std::vector<MoveRecord>> ListMoves(const std::optional<std::string>& user);

 private:
  Database& db_;
};

}  // namespace cedana::controller
