#include "controller/catalog/checkpoint_index.h"

#include <fmt/format.h>
#include <charconv>
#include <set>

namespace cedana::controller {
namespace {

struct CheckpointPageCursor {
  int64_t created_ms = 0;
  std::string id;
};

constexpr char kCheckpointColumns[] =
    "id, owner, label, job_id, node, created_ms, size, image_size, codec, streams, state, "
    "location, policy_id, manifest, run, reason, restart_count, frozen_ms, duration_ms";

CheckpointRecord CheckpointOf(const SqlRow& r) {
  CheckpointRecord c;
  c.id = r.Text(0);
  c.owner = r.Text(1);
  c.label = r.Text(2);
  c.job_id = r.OptionalInt(3);
  c.node = r.Text(4);
  c.created_ms = r.Int(5);
  c.size = r.Int(6);
  c.image_size = r.Int(7);
  c.codec = r.Text(8);
  c.streams = r.Int(9);
  c.state = r.Text(10);
  c.location = r.Text(11);
  c.policy_id = r.OptionalInt(12);
  c.manifest = r.Text(13);
  c.run = r.Text(14);
  c.reason = r.Text(15);
  c.restart_count = r.Int(16);
  c.frozen_ms = r.Int(17);
  c.duration_ms = r.Int(18);
  return c;
}

}  // namespace

Status CheckpointIndex::Upsert(const CheckpointRecord& c) {
  return db_.Exec(
      "INSERT INTO checkpoints (id, owner, label, job_id, node, created_ms, size, image_size, "
      "codec, "
      "streams, state, location, policy_id, manifest, run, reason, restart_count, frozen_ms, "
      "duration_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (id) DO UPDATE SET state = excluded.state, location = excluded.location, "
      "size = excluded.size, manifest = excluded.manifest, run = excluded.run, "
      "policy_id = COALESCE(checkpoints.policy_id, excluded.policy_id)",
      {c.id, c.owner, c.label, SqlOptional(c.job_id), c.node, c.created_ms, c.size, c.image_size,
       c.codec, c.streams, c.state, c.location, SqlOptional(c.policy_id), c.manifest, c.run,
       c.reason, c.restart_count, c.frozen_ms, c.duration_ms});
}

Status CheckpointIndex::Sync(const std::vector<CheckpointRecord>& found) {
  return db_.Transaction([&]() -> Status {
    std::set<std::string> ids;
    for (const auto& c : found) {
      CEDANA_RETURN_IF_ERROR(Upsert(c));
      ids.insert(c.id);
    }
    CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query("SELECT id FROM checkpoints"));
    for (const auto& r : rows)
      if (!ids.count(r.Text(0))) CEDANA_RETURN_IF_ERROR(Delete(r.Text(0)));
    return OkStatus();
  });
}

Status CheckpointIndex::Update(const std::vector<CheckpointRecord>& changed,
                               const std::vector<std::string>& removed) {
  if (changed.empty() && removed.empty()) return OkStatus();
  return db_.Transaction([&]() -> Status {
    for (const auto& c : changed) CEDANA_RETURN_IF_ERROR(Upsert(c));
    for (const std::string& id : removed) CEDANA_RETURN_IF_ERROR(Delete(id));
    return OkStatus();
  });
}

Result<std::vector<CheckpointRecord>> CheckpointIndex::List(const CheckpointFilter& f) {
  CEDANA_ASSIGN_OR_RETURN(Paged<CheckpointRecord> all, ListPage(f, {}));
  return std::move(all.items);
}

namespace {

// A checkpoint page's cursor: "<created_ms>.<id>" of its last row (split at the first '.': an id
// may hold more).
Result<CheckpointPageCursor> ParseCheckpointCursor(const std::string& after) {
  size_t dot = after.find('.');
  int64_t ms = 0;
  const char* end = after.data() + (dot == std::string::npos ? after.size() : dot);
  auto [at, ec] = std::from_chars(after.data(), end, ms);
  if (dot == std::string::npos || ec != std::errc() || at != end || dot + 1 == after.size())
    return InvalidArgumentError(fmt::format(
        "after \"{}\" is not a checkpoint page's cursor (give the X-Next-After of the page before)",
        after));
  return CheckpointPageCursor{ms, after.substr(dot + 1)};
}

}  // namespace

Result<Paged<CheckpointRecord>> CheckpointIndex::ListPage(const CheckpointFilter& f,
                                                          const PageRequest& page) {
  std::string sql = fmt::format("SELECT {} FROM checkpoints WHERE 1 = 1", kCheckpointColumns);
  std::vector<SqlValue> params;
  AndEquals(&sql, &params, "owner", f.owner);
  AndEquals(&sql, &params, "label", f.label);
  AndEquals(&sql, &params, "job_id", f.job_id);
  if (!page.after.empty()) {
    CEDANA_ASSIGN_OR_RETURN(CheckpointPageCursor c, ParseCheckpointCursor(page.after));
    sql += " AND (created_ms < ? OR (created_ms = ? AND id < ?))";
    params.insert(params.end(), {c.created_ms, c.created_ms, c.id});
  }
  sql += " ORDER BY created_ms DESC, id DESC" + PageLimitSql(page);
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(sql, params));
  std::vector<CheckpointRecord> items;
  for (const auto& r : rows) items.push_back(CheckpointOf(r));
  return PageOf(std::move(items), page,
                [](const CheckpointRecord& c) { return fmt::format("{}.{}", c.created_ms, c.id); });
}

Result<CheckpointRecord> CheckpointIndex::Get(const std::string& id) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query(fmt::format("SELECT {} FROM checkpoints WHERE id = ?", kCheckpointColumns), {id}));
  if (rows.empty()) return NotFoundError(fmt::format("checkpoint {} not found", id));
  return CheckpointOf(rows[0]);
}

Status CheckpointIndex::Delete(const std::string& id) {
  return db_.Exec("DELETE FROM checkpoints WHERE id = ?", {id});
}

Status CheckpointIndex::SetPolicy(const std::string& id, int64_t policy_id) {
  return db_.Exec("UPDATE checkpoints SET policy_id = ? WHERE id = ?", {policy_id, id});
}

}  // namespace cedana::controller
