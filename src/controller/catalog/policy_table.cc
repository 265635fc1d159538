#include "controller/catalog/policy_table.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cedana::controller {
namespace {

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

}  // namespace

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

Result<PolicyRecord> PolicyTable::Create(const PolicyRecord& p) {
  Result<std::vector<SqlRow>> rows = db_.Query(
      "INSERT INTO policies (name, interval_seconds, enabled, selector, max_checkpoints, owner, "
      "owner_is_admin, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      {p.name, p.interval_seconds, int64_t{p.enabled}, SelectorToJson(p.selector),
       SqlOptional(p.max_checkpoints), p.owner, int64_t{p.owner_is_admin}, NowMs()});
  if (!rows.has_value()) {
    if (rows.error().code() == Code::kAlreadyExists)
      return AlreadyExistsError(fmt::format("a policy named \"{}\" exists already", p.name));
    return rows.error();
  }
  return Get(rows->at(0).Int(0));
}

Status PolicyTable::Update(const PolicyRecord& p) {
  Result<std::vector<SqlRow>> rows = db_.Query(
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

Status PolicyTable::Delete(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows,
                          db_.Query("DELETE FROM policies WHERE id = ? RETURNING id", {id}));
  if (rows.empty()) return NotFoundError(fmt::format("policy {} not found", id));
  return OkStatus();
}

Result<PolicyRecord> PolicyTable::Get(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query(fmt::format("SELECT {} FROM policies WHERE id = ?", kPolicyColumns), {id}));
  if (rows.empty()) return NotFoundError(fmt::format("policy {} not found", id));
  return PolicyOf(rows[0]);
}

Result<std::vector<PolicyRecord>> PolicyTable::List(const std::optional<std::string>& owner) {
  std::string sql = fmt::format("SELECT {} FROM policies", kPolicyColumns);
  std::vector<SqlValue> params;
  if (owner) {
    sql += " WHERE owner = ?";
    params.push_back(*owner);
  }
  sql += " ORDER BY id";
  CEDANA_ASSIGN_OR_RETURN(auto rows, db_.Query(sql, params));
  std::vector<PolicyRecord> out;
  for (const auto& r : rows) {
    CEDANA_ASSIGN_OR_RETURN(PolicyRecord p, PolicyOf(r));
    out.push_back(std::move(p));
  }
  return out;
}

Status PolicyTable::SetLastRun(int64_t id, int64_t ms) {
  return db_.Exec("UPDATE policies SET last_run_ms = ? WHERE id = ?", {ms, id});
}

}  // namespace cedana::controller
