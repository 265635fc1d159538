#include "controller/catalog/catalog.h"

#include <openssl/rand.h>

#include <charconv>
#include <chrono>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/hex.h"
#include "common/unix_time.h"
#include "image/checksum.h"

namespace cedana::controller {
namespace {

std::string HashToken(const std::string& token) { return image::Sha256Hex(token); }

constexpr char kJobColumns[] =
    "j.job_id, j.name, j.user_name, j.partition_name, j.node, j.state, j.start_time, "
    "m.label, m.agent_node, n.text, n.at_ms";
// Every job query: its managed workload (if any) and its notice (if any).
constexpr char kJobJoins[] =
    "jobs j LEFT JOIN managed_jobs m ON m.job_id = j.job_id LEFT JOIN job_notices n ON n.job_id = "
    "j.job_id";

struct CheckpointPageCursor {
  int64_t created_ms = 0;
  std::string id;
};

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

constexpr char kPolicyColumns[] =
    "id, name, interval_seconds, enabled, selector, max_checkpoints, owner, created_ms, "
    "last_run_ms, "
    "owner_is_admin";

Result<PolicyRecord> PolicyOf(const SqlRow& r) {
  PolicyRecord p;
  p.id = r.Int(0);
  p.name = r.Text(1);
  p.interval_seconds = r.Int(2);
  p.enabled = r.Int(3) != 0;
  CEDANA_ASSIGN_OR_RETURN(p.selector, SelectorFromJson(r.Text(4)));
  p.max_checkpoints = r.OptionalInt(5);
  p.owner = r.Text(6);
  p.created_ms = r.Int(7);
  p.last_run_ms = r.OptionalInt(8);
  p.owner_is_admin = r.Int(9) != 0;
  return p;
}

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

OperationRecord OperationOf(const SqlRow& r) {
  OperationRecord o;
  o.id = r.Int(0);
  o.kind = r.Text(1);
  o.job_id = r.OptionalInt(2);
  o.checkpoint_id = r.cells[3];
  o.node = r.Text(4);
  o.policy_id = r.OptionalInt(5);
  o.owner = r.Text(6);
  o.state = r.Text(7);
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

int64_t NowMs() { return UnixMillis(); }

std::string SelectorToJson(const PolicySelector& s) {
  nlohmann::json j = nlohmann::json::object();
  if (s.job_id.has_value()) j["job_id"] = *s.job_id;
  if (!s.name_pattern.empty()) j["name_pattern"] = s.name_pattern;
  if (!s.user.empty()) j["user"] = s.user;
  if (!s.partition.empty()) j["partition"] = s.partition;
  if (!s.label.empty()) j["label"] = s.label;
  return j.dump();
}

Result<PolicySelector> SelectorFromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text.empty() ? "{}" : text, nullptr, false);
  if (!j.is_object()) return InvalidArgumentError("policy selector is not a JSON object");
  PolicySelector s;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const auto& v = it.value();
    if (k != "job_id" && k != "name_pattern" && k != "user" && k != "partition" && k != "label")
      return InvalidArgumentError(fmt::format(
          "unknown selector key \"{}\" (valid: job_id, name_pattern, user, partition, label)", k));
    if (v.is_null()) continue;
    if (k == "job_id") {
      std::string text = v.is_number_integer() ? std::to_string(v.get<int64_t>())
                         : v.is_string()       ? v.get<std::string>()
                                               : std::string("x");
      if (text.empty()) continue;
      if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 12 ||
          text == "0")
        return InvalidArgumentError("selector.job_id must be a positive job number");
      s.job_id = std::stoll(text);
      continue;
    }
    if (!v.is_string()) return InvalidArgumentError(fmt::format("selector.{} must be a string", k));
    if (k == "name_pattern") s.name_pattern = v.get<std::string>();
    else if (k == "user") s.user = v.get<std::string>();
    else if (k == "partition") s.partition = v.get<std::string>();
    else s.label = v.get<std::string>();
  }
  return s;
}

Catalog::Catalog(std::unique_ptr<Database> db) : db_(std::move(db)) {}

int64_t Catalog::NextStamp() {
  int64_t now = NowMs(), last = last_stamp_.load();
  int64_t next;
  do {
    next = std::max(now, last + 1);
  } while (!last_stamp_.compare_exchange_weak(last, next));
  return next;
}

// --- tokens ---

Result<std::pair<int64_t, std::string>> Catalog::CreateToken(const std::string& user, bool admin) {
  unsigned char raw[24];
  if (RAND_bytes(raw, sizeof raw) != 1) return InternalError("no random bytes for a token");
  std::string token =
      "cdn_" + HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof raw));
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query("INSERT INTO tokens (hash, user_name, is_admin, created_ms) VALUES (?, ?, ?, ?) "
                 "RETURNING id",
                 {HashToken(token), user, int64_t{admin}, NowMs()}));
  return std::make_pair(rows.at(0).Int(0), token);
}

Result<TokenRecord> Catalog::FindToken(const std::string& token) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows, db_->Query("SELECT id, user_name, is_admin, created_ms FROM tokens WHERE hash = ?",
                            {HashToken(token)}));
  if (rows.empty()) return NotFoundError("unknown token");
  return TokenRecord{rows[0].Int(0), rows[0].Text(1), rows[0].Int(2) != 0, rows[0].Int(3)};
}

Result<std::vector<TokenRecord>> Catalog::ListTokens() {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows, db_->Query("SELECT id, user_name, is_admin, created_ms FROM tokens ORDER BY id"));
  std::vector<TokenRecord> out;
  for (const auto& r : rows) out.push_back({r.Int(0), r.Text(1), r.Int(2) != 0, r.Int(3)});
  return out;
}

Status Catalog::DeleteToken(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows,
                          db_->Query("DELETE FROM tokens WHERE id = ? RETURNING id", {id}));
  if (rows.empty()) return NotFoundError(fmt::format("token {} not found", id));
  return OkStatus();
}

// --- nodes ---

Status Catalog::TouchNode(const std::string& name, const std::string& version) {
  return db_->Exec(
      "INSERT INTO nodes (name, version, last_seen_ms) VALUES (?, ?, ?) "
      "ON CONFLICT (name) DO UPDATE SET version = excluded.version, last_seen_ms = "
      "excluded.last_seen_ms",
      {name, version, NowMs()});
}

Result<std::vector<NodeRecord>> Catalog::ListNodes() {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows, db_->Query("SELECT name, version, last_seen_ms FROM nodes ORDER BY name"));
  std::vector<NodeRecord> out;
  for (const auto& r : rows) out.push_back({r.Text(0), r.Text(1), r.Int(2)});
  return out;
}

// --- jobs ---

Status Catalog::UpsertJob(const JobRecord& j, int64_t stamp) {
  return db_->Exec(
      "INSERT INTO jobs (job_id, name, user_name, partition_name, node, state, start_time, "
      "updated_ms) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET name = excluded.name, "
      "user_name = excluded.user_name, partition_name = excluded.partition_name, node = "
      "excluded.node, "
      "state = excluded.state, start_time = excluded.start_time, updated_ms = excluded.updated_ms",
      {j.job_id, j.name, j.user, j.partition, j.node, j.state, j.start_time, stamp});
}

Status Catalog::SyncJobs(const std::vector<JobRecord>& jobs) {
  return db_->Transaction([&]() -> Status {
    int64_t now = NextStamp();
    for (const JobRecord& j : jobs) CEDANA_RETURN_IF_ERROR(UpsertJob(j, now));
    CEDANA_RETURN_IF_ERROR(db_->Exec("DELETE FROM jobs WHERE updated_ms < ?", {now}));
    CEDANA_RETURN_IF_ERROR(
        db_->Exec("DELETE FROM job_notices WHERE job_id NOT IN (SELECT job_id FROM jobs)"));
    return db_->Exec("DELETE FROM job_events WHERE job_id NOT IN (SELECT job_id FROM jobs)");
  });
}

Status Catalog::UpdateJobs(const std::vector<JobRecord>& changed,
                           const std::vector<int64_t>& removed) {
  if (changed.empty() && removed.empty()) return OkStatus();
  return db_->Transaction([&]() -> Status {
    int64_t now = NextStamp();
    for (const JobRecord& j : changed) CEDANA_RETURN_IF_ERROR(UpsertJob(j, now));
    for (int64_t id : removed)
      for (const char* table : {"jobs", "job_notices", "job_events"})
        CEDANA_RETURN_IF_ERROR(
            db_->Exec(fmt::format("DELETE FROM {} WHERE job_id = ?", table), {id}));
    return OkStatus();
  });
}

Status Catalog::SyncManagedJobs(const std::string& agent_node,
                                const std::vector<ManagedJob>& jobs) {
  return db_->Transaction([&]() -> Status {
    int64_t now = NextStamp();
    for (const ManagedJob& m : jobs) {
      CEDANA_RETURN_IF_ERROR(db_->Exec(
          "INSERT INTO managed_jobs (job_id, agent_node, label, user_name, status, updated_ms) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET agent_node = "
          "excluded.agent_node, "
          "label = excluded.label, user_name = excluded.user_name, status = excluded.status, "
          "updated_ms = excluded.updated_ms",
          {m.job_id, agent_node, m.label, m.user, m.status, now}));
      // The newest notice of the job stays after its workload is gone (a requeue starts another).
      if (!m.notice.empty())
        CEDANA_RETURN_IF_ERROR(
            db_->Exec("INSERT INTO job_notices (job_id, text, at_ms) VALUES (?, ?, ?) ON CONFLICT "
                      "(job_id) DO UPDATE "
                      "SET text = excluded.text, at_ms = excluded.at_ms WHERE excluded.at_ms > "
                      "job_notices.at_ms",
                      {m.job_id, m.notice, m.notice_at_ms}));
    }
    return db_->Exec("DELETE FROM managed_jobs WHERE agent_node = ? AND updated_ms < ?",
                     {agent_node, now});
  });
}

Result<std::vector<JobRecord>> Catalog::ListJobs(const std::optional<std::string>& user) {
  CEDANA_ASSIGN_OR_RETURN(Paged<JobRecord> all,
                          ListJobsPage({user, std::nullopt, std::nullopt}, {}));
  return std::move(all.items);
}

Result<Paged<JobRecord>> Catalog::ListJobsPage(const JobFilter& f, const PageRequest& page) {
  std::string sql = fmt::format("SELECT {} FROM {} WHERE 1 = 1", kJobColumns, kJobJoins);
  std::vector<SqlValue> params;
  if (f.user) {
    sql += " AND j.user_name = ?";
    params.push_back(*f.user);
  }
  if (f.state) {
    sql += " AND j.state = ?";
    params.push_back(*f.state);
  }
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
  sql += " ORDER BY j.job_id DESC";
  if (page.limit > 0) sql += fmt::format(" LIMIT {}", page.limit + 1);
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query(sql, params));
  Paged<JobRecord> out;
  for (const auto& r : rows) out.items.push_back(JobOf(r));
  if (page.limit > 0 && out.items.size() > static_cast<size_t>(page.limit)) {
    out.items.pop_back();
    out.next = std::to_string(out.items.back().job_id);
  }
  return out;
}

Result<JobRecord> Catalog::GetJob(int64_t job_id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query(fmt::format("SELECT {} FROM {} WHERE j.job_id = ?",
                                                            kJobColumns, kJobJoins),
                                                {job_id}));
  if (rows.empty()) return NotFoundError(fmt::format("job {} not found", job_id));
  return JobOf(rows[0]);
}

// --- checkpoints ---

Status Catalog::UpsertCheckpoint(const CheckpointRecord& c) {
  return db_->Exec(
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

Status Catalog::SyncCheckpoints(const std::vector<CheckpointRecord>& found) {
  return db_->Transaction([&]() -> Status {
    std::set<std::string> ids;
    for (const auto& c : found) {
      CEDANA_RETURN_IF_ERROR(UpsertCheckpoint(c));
      ids.insert(c.id);
    }
    CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query("SELECT id FROM checkpoints"));
    for (const auto& r : rows)
      if (!ids.count(r.Text(0))) CEDANA_RETURN_IF_ERROR(DeleteCheckpoint(r.Text(0)));
    return OkStatus();
  });
}

Status Catalog::UpdateCheckpoints(const std::vector<CheckpointRecord>& changed,
                                  const std::vector<std::string>& removed) {
  if (changed.empty() && removed.empty()) return OkStatus();
  return db_->Transaction([&]() -> Status {
    for (const auto& c : changed) CEDANA_RETURN_IF_ERROR(UpsertCheckpoint(c));
    for (const std::string& id : removed) CEDANA_RETURN_IF_ERROR(DeleteCheckpoint(id));
    return OkStatus();
  });
}

Result<std::vector<CheckpointRecord>> Catalog::ListCheckpoints(const CheckpointFilter& f) {
  CEDANA_ASSIGN_OR_RETURN(Paged<CheckpointRecord> all, ListCheckpointsPage(f, {}));
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

Result<Paged<CheckpointRecord>> Catalog::ListCheckpointsPage(const CheckpointFilter& f,
                                                             const PageRequest& page) {
  std::string sql = fmt::format("SELECT {} FROM checkpoints WHERE 1 = 1", kCheckpointColumns);
  std::vector<SqlValue> params;
  if (f.owner) {
    sql += " AND owner = ?";
    params.push_back(*f.owner);
  }
  if (f.label) {
    sql += " AND label = ?";
    params.push_back(*f.label);
  }
  if (f.job_id) {
    sql += " AND job_id = ?";
    params.push_back(*f.job_id);
  }
  if (!page.after.empty()) {
    CEDANA_ASSIGN_OR_RETURN(CheckpointPageCursor c, ParseCheckpointCursor(page.after));
    sql += " AND (created_ms < ? OR (created_ms = ? AND id < ?))";
    params.insert(params.end(), {c.created_ms, c.created_ms, c.id});
  }
  sql += " ORDER BY created_ms DESC, id DESC";
  if (page.limit > 0) sql += fmt::format(" LIMIT {}", page.limit + 1);
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query(sql, params));
  Paged<CheckpointRecord> out;
  for (const auto& r : rows) out.items.push_back(CheckpointOf(r));
  if (page.limit > 0 && out.items.size() > static_cast<size_t>(page.limit)) {
    out.items.pop_back();
    out.next = fmt::format("{}.{}", out.items.back().created_ms, out.items.back().id);
  }
  return out;
}

Result<CheckpointRecord> Catalog::GetCheckpoint(const std::string& id) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query(fmt::format("SELECT {} FROM checkpoints WHERE id = ?", kCheckpointColumns), {id}));
  if (rows.empty()) return NotFoundError(fmt::format("checkpoint {} not found", id));
  return CheckpointOf(rows[0]);
}

Status Catalog::DeleteCheckpoint(const std::string& id) {
  return db_->Exec("DELETE FROM checkpoints WHERE id = ?", {id});
}

Status Catalog::SetCheckpointPolicy(const std::string& id, int64_t policy_id) {
  return db_->Exec("UPDATE checkpoints SET policy_id = ? WHERE id = ?", {policy_id, id});
}

// --- policies ---

Result<PolicyRecord> Catalog::CreatePolicy(const PolicyRecord& p) {
  Result<std::vector<SqlRow>> rows = db_->Query(
      "INSERT INTO policies (name, interval_seconds, enabled, selector, max_checkpoints, owner, "
      "owner_is_admin, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      {p.name, p.interval_seconds, int64_t{p.enabled}, SelectorToJson(p.selector),
       SqlOptional(p.max_checkpoints), p.owner, int64_t{p.owner_is_admin}, NowMs()});
  if (!rows.has_value()) {
    if (rows.error().code() == Code::kAlreadyExists)
      return AlreadyExistsError(fmt::format("a policy named \"{}\" exists already", p.name));
    return rows.error();
  }
  return GetPolicy(rows->at(0).Int(0));
}

Status Catalog::UpdatePolicy(const PolicyRecord& p) {
  Result<std::vector<SqlRow>> rows = db_->Query(
      "UPDATE policies SET name = ?, interval_seconds = ?, enabled = ?, selector = ?, "
      "max_checkpoints = ? "
      "WHERE id = ? RETURNING id",
      {p.name, p.interval_seconds, int64_t{p.enabled}, SelectorToJson(p.selector),
       SqlOptional(p.max_checkpoints), p.id});
  if (!rows.has_value()) {
    if (rows.error().code() == Code::kAlreadyExists)
      return AlreadyExistsError(fmt::format("a policy named \"{}\" exists already", p.name));
    return rows.error();
  }
  if (rows->empty()) return NotFoundError(fmt::format("policy {} not found", p.id));
  return OkStatus();
}

Status Catalog::DeletePolicy(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows,
                          db_->Query("DELETE FROM policies WHERE id = ? RETURNING id", {id}));
  if (rows.empty()) return NotFoundError(fmt::format("policy {} not found", id));
  return OkStatus();
}

Result<PolicyRecord> Catalog::GetPolicy(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query(fmt::format("SELECT {} FROM policies WHERE id = ?", kPolicyColumns), {id}));
  if (rows.empty()) return NotFoundError(fmt::format("policy {} not found", id));
  return PolicyOf(rows[0]);
}

Result<std::vector<PolicyRecord>> Catalog::ListPolicies(const std::optional<std::string>& owner) {
  std::string sql = fmt::format("SELECT {} FROM policies", kPolicyColumns);
  std::vector<SqlValue> params;
  if (owner) {
    sql += " WHERE owner = ?";
    params.push_back(*owner);
  }
  sql += " ORDER BY id";
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query(sql, params));
  std::vector<PolicyRecord> out;
  for (const auto& r : rows) {
    CEDANA_ASSIGN_OR_RETURN(PolicyRecord p, PolicyOf(r));
    out.push_back(std::move(p));
  }
  return out;
}

Status Catalog::SetPolicyLastRun(int64_t id, int64_t ms) {
  return db_->Exec("UPDATE policies SET last_run_ms = ? WHERE id = ?", {ms, id});
}

// --- operations ---

Result<OperationRecord> Catalog::CreateOperation(const OperationRecord& o) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query(
          "INSERT INTO operations (kind, job_id, checkpoint_id, node, policy_id, owner, state, "
          "created_ms, reason) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id",
          {o.kind, SqlOptional(o.job_id), SqlOptional(o.checkpoint_id), o.node,
           SqlOptional(o.policy_id), o.owner, NowMs(), o.reason}));
  return GetOperation(rows.at(0).Int(0));
}

Result<std::vector<OperationRecord>> Catalog::ClaimOperations(const std::string& node) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query(fmt::format("UPDATE operations SET state = 'running', phase = 'claimed' "
                             "WHERE node = ? AND state = 'queued' RETURNING {}",
                             kOperationColumns),
                 {node}));
  std::vector<OperationRecord> out;
  for (const auto& r : rows) out.push_back(OperationOf(r));
  return out;
}

Status Catalog::UpdateOperation(const OperationRecord& o) {
  bool final_state = o.state == "done" || o.state == "failed";
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query("UPDATE operations SET state = ?, phase = ?, done_bytes = ?, total_bytes = ?, "
                 "checkpoint_id = COALESCE(?, checkpoint_id), error = ?, finished_ms = ?, "
                 "phases = ? WHERE id = ? RETURNING id",
                 {o.state, o.phase, o.done_bytes, o.total_bytes, SqlOptional(o.checkpoint_id),
                  SqlOptional(o.error), final_state ? SqlValue(NowMs()) : SqlNull(),
                  PhaseDurationsJson(o.phases_ms).dump(), o.id}));
  if (rows.empty()) return NotFoundError(fmt::format("operation {} not found", o.id));
  return OkStatus();
}

Result<OperationRecord> Catalog::GetOperation(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_->Query(fmt::format("SELECT {} FROM operations WHERE id = ?", kOperationColumns), {id}));
  if (rows.empty()) return NotFoundError(fmt::format("operation {} not found", id));
  return OperationOf(rows[0]);
}

Result<std::vector<OperationRecord>> Catalog::ListOperations(
    const std::optional<std::string>& owner, const std::optional<std::string>& state, int limit) {
  std::string sql = fmt::format("SELECT {} FROM operations WHERE 1 = 1", kOperationColumns);
  std::vector<SqlValue> params;
  if (owner) {
    sql += " AND owner = ?";
    params.push_back(*owner);
  }
  if (state) {
    sql += " AND state = ?";
    params.push_back(*state);
  }
  sql += fmt::format(" ORDER BY id DESC LIMIT {}", limit);
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query(sql, params));
  std::vector<OperationRecord> out;
  for (const auto& r : rows) out.push_back(OperationOf(r));
  return out;
}

Result<std::optional<OperationRecord>> Catalog::LastDump(int64_t job_id,
                                                         std::optional<int64_t> policy_id) {
  std::string sql = fmt::format("SELECT {} FROM operations WHERE kind = 'dump' AND job_id = ?",
                                kOperationColumns);
  std::vector<SqlValue> params = {job_id};
  if (policy_id) {
    sql += " AND policy_id = ?";
    params.push_back(*policy_id);
  }
  sql += " ORDER BY id DESC LIMIT 1";
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_->Query(sql, params));
  if (rows.empty()) return std::optional<OperationRecord>();
  return std::optional<OperationRecord>(OperationOf(rows[0]));
}

Status Catalog::FailStaleOperations(int64_t stale_ms) {
  return db_->Exec(
      "UPDATE operations SET state = 'failed', error = 'the node daemon did not report back in "
      "time', "
      "finished_ms = ? WHERE state IN ('queued', 'running') AND created_ms < ?",
      {NowMs(), NowMs() - stale_ms});
}

}  // namespace cedana::controller
