#include "controller/catalog/operation_table.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cedana::controller {
namespace {

constexpr char kOperationColumns[] =
    "id, kind, job_id, checkpoint_id, node, policy_id, owner, state, phase, done_bytes, "
    "total_bytes, error, created_ms, finished_ms, reason, phases";

// The phases column holds their JSON form (common/phase_durations.h). Written only by
// UpdateOperation; anything else read back (a hand-edited row) is no phases.
PhaseDurations PhasesOf(const std::string& text) {
  Result<PhaseDurations> phases =
      ParsePhaseDurations(nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false));
  return phases.has_value() ? *phases : PhaseDurations{};
}

// Only this table writes the kind and state columns, always as one of their words; a row with
// another (edited by hand) reads as the enum's first value rather than failing every listing.
template <typename E, size_t N>
E Named(const NamedValue<E> (&names)[N], const std::string& word) {
  return ValueNamed(names, word).value_or(names[0].value);
}

OperationRecord OperationOf(const SqlRow& r) {
  OperationRecord o;
  o.id = r.Int(0);
  o.kind = Named(kOperationKindNames, r.Text(1));
  o.job_id = r.OptionalInt(2);
  o.checkpoint_id = r.cells[3];
  o.node = r.Text(4);
  o.policy_id = r.OptionalInt(5);
  o.owner = r.Text(6);
  o.state = Named(kOperationStateNames, r.Text(7));
  o.phase = r.Text(8);
  o.done_bytes = r.Int(9);
  o.total_bytes = r.Int(10);
  o.error = r.cells[11];
  o.created_ms = r.Int(12);
  o.finished_ms = r.OptionalInt(13);
  o.reason = r.Text(14);
  o.phases_ms = PhasesOf(r.Text(15));
  return o;
}

}  // namespace

Result<OperationRecord> OperationTable::Create(const OperationRecord& o) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query(
          "INSERT INTO operations (kind, job_id, checkpoint_id, node, policy_id, owner, state, "
          "created_ms, reason) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id",
          {std::string(NameOf(kOperationKindNames, o.kind)), SqlOptional(o.job_id),
           SqlOptional(o.checkpoint_id), o.node, SqlOptional(o.policy_id), o.owner, NowMs(),
           o.reason}));
  return Get(rows.at(0).Int(0));
}

Result<std::vector<OperationRecord>> OperationTable::Claim(const std::string& node) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows, db_.Query(fmt::format("UPDATE operations SET state = 'running', phase = 'claimed' "
                                       "WHERE node = ? AND state = 'queued' RETURNING {}",
                                       kOperationColumns),
                           {node}));
  std::vector<OperationRecord> out;
  for (const auto& r : rows) out.push_back(OperationOf(r));
  return out;
}

Status OperationTable::Update(const OperationRecord& o) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query("UPDATE operations SET state = ?, phase = ?, done_bytes = ?, total_bytes = ?, "
                "checkpoint_id = COALESCE(?, checkpoint_id), error = ?, finished_ms = ?, "
                "phases = ? WHERE id = ? RETURNING id",
                {std::string(NameOf(kOperationStateNames, o.state)), o.phase, o.done_bytes,
                 o.total_bytes, SqlOptional(o.checkpoint_id), SqlOptional(o.error),
                 IsFinal(o.state) ? SqlValue(NowMs()) : SqlNull(),
                 PhaseDurationsJson(o.phases_ms).dump(), o.id}));
  if (rows.empty()) return NotFoundError(fmt::format("operation {} not found", o.id));
  return OkStatus();
}

Result<OperationRecord> OperationTable::Get(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query(fmt::format("SELECT {} FROM operations WHERE id = ?", kOperationColumns), {id}));
  if (rows.empty()) return NotFoundError(fmt::format("operation {} not found", id));
  return OperationOf(rows[0]);
}

Result<std::vector<OperationRecord>> OperationTable::List(const std::optional<std::string>& owner,
                                                          std::optional<OperationState> state,
                                                          int limit) {
  std::string sql = fmt::format("SELECT {} FROM operations WHERE 1 = 1", kOperationColumns);
  std::vector<SqlValue> params;
  AndEquals(&sql, &params, "owner", owner);
  AndEquals(
      &sql, &params, "state",
      state ? std::optional<std::string>(NameOf(kOperationStateNames, *state)) : std::nullopt);
  sql += fmt::format(" ORDER BY id DESC LIMIT {}", limit);
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(sql, params));
  std::vector<OperationRecord> out;
  for (const auto& r : rows) out.push_back(OperationOf(r));
  return out;
}

Result<std::optional<OperationRecord>> OperationTable::LastDump(int64_t job_id,
                                                                std::optional<int64_t> policy_id) {
  std::string sql = fmt::format("SELECT {} FROM operations WHERE kind = 'dump' AND job_id = ?",
                                kOperationColumns);
  std::vector<SqlValue> params = {job_id};
  AndEquals(&sql, &params, "policy_id", policy_id);
  sql += " ORDER BY id DESC LIMIT 1";
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(sql, params));
  if (rows.empty()) return std::optional<OperationRecord>();
  return std::optional<OperationRecord>(OperationOf(rows[0]));
}

Status OperationTable::FailStale(int64_t stale_ms) {
  return db_.Exec(
      "UPDATE operations SET state = 'failed', error = 'the node daemon did not report back in "
      "time', "
      "finished_ms = ? WHERE state IN ('queued', 'running') AND created_ms < ?",
      {NowMs(), NowMs() - stale_ms});
}

}  // namespace cedana::controller
