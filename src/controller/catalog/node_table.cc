#include "controller/catalog/node_table.h"

namespace cedana::controller {

Status NodeTable::Touch(const std::string& name, const std::string& version) {
  return db_.Exec(
      "INSERT INTO nodes (name, version, last_seen_ms) VALUES (?, ?, ?) "
      "ON CONFLICT (name) DO UPDATE SET version = excluded.version, last_seen_ms = "
      "excluded.last_seen_ms",
      {name, version, NowMs()});
}

Result<std::vector<NodeRecord>> NodeTable::List() {
  CEDANA_ASSIGN_OR_RETURN(auto rows,
                          db_.Query("SELECT name, version, last_seen_ms FROM nodes ORDER BY name"));
  std::vector<NodeRecord> out;
  for (const auto& r : rows) out.push_back({r.Text(0), r.Text(1), r.Int(2)});
  return out;
}

}  // namespace cedana::controller
