#include "controller/http/api_json.h"

#include <fmt/format.h>

#include "common/bounded_json.h"
#include "controller/timeline/job_events.h"

namespace cedana::controller {
namespace {

template <typename T>
nlohmann::json Nullable(const std::optional<T>& v) {
  return v.has_value() ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Nodes that have not reported for this long are shown as down.
constexpr int64_t kNodeDownAfterMs = 30000;

}  // namespace

nlohmann::json ToJson(const JobRecord& j) {
  return {{"job_id", j.job_id},
          {"name", j.name},
          {"user", j.user},
          {"partition", j.partition},
          {"node", j.node},
          {"state", j.state},
          {"enabled", j.enabled},
          {"label", j.label},
          {"start_time", j.start_time},
          {"notice", j.notice},
          {"notice_at_ms", j.notice_at_ms}};
}

nlohmann::json ToJson(const JobEvent& e) {
  nlohmann::json j = {{"kind", e.kind}, {"run", e.run}, {"at_ms", e.at_ms}, {"detail", e.detail}};
  if (!e.checkpoint_id.empty()) j["checkpoint_id"] = e.checkpoint_id;
  if (e.kind == kEventCheckpoint) {
    j["size"] = e.size;
    j["duration_ms"] = e.duration_ms;
    j["frozen_ms"] = e.frozen_ms;
  }
  return j;
}

nlohmann::json ToJson(const WindowRecord& w) {
  nlohmann::json warnings = nlohmann::json::array();
  for (size_t b = 0, e; b < w.warnings.size(); b = e + 1) {
    e = w.warnings.find('\n', b);
    if (e == std::string::npos) e = w.warnings.size();
    warnings.push_back(w.warnings.substr(b, e - b));
  }
  return {{"name", w.name},
          {"nodes", w.nodes},
          {"start_time", w.start_time},
          {"end_time", w.end_time},
          {"max_start_delay", w.max_start_delay},
          {"status", w.status},
          {"warnings", warnings}};
}

nlohmann::json ToJson(const MoveRecord& m) {
  return {{"job_id", m.job_id},
          {"user", m.user},
          {"action", m.action},
          {"detail", m.detail},
          {"at_ms", m.at_ms}};
}

nlohmann::json ToJson(const CheckpointRecord& c, bool with_manifest) {
  nlohmann::json j = {{"id", c.id},
                      {"owner", c.owner},
                      {"label", c.label},
                      {"job_id", Nullable(c.job_id)},
                      {"node", c.node},
                      {"created_ms", c.created_ms},
                      {"size", c.size},
                      {"image_size", c.image_size},
                      {"codec", c.codec},
                      {"streams", c.streams},
                      {"state", c.state},
                      {"run", c.run},
                      {"reason", c.reason},
                      {"restart_count", c.restart_count},
                      {"frozen_ms", c.frozen_ms},
                      {"duration_ms", c.duration_ms},
                      {"location", c.location},
                      {"policy_id", Nullable(c.policy_id)}};
  if (with_manifest) {
    // A manifest read from storage: bounded like every manifest (image/manifest.cc).
    Result<nlohmann::json> parsed = ParseBoundedJson(c.manifest);
    nlohmann::json m = parsed.has_value() ? std::move(parsed).value() : nlohmann::json();
    if (m.is_object()) {
      m.erase("workload");  // argv/env of the job: not for every API reader; the MAC is kept
      j["manifest"] = m;
    }
  }
  return j;
}

nlohmann::json ToJson(const PolicyRecord& p) {
  nlohmann::json selector = nlohmann::json::parse(SelectorToJson(p.selector));
  return {{"id", p.id},
          {"name", p.name},
          {"interval_seconds", p.interval_seconds},
          {"enabled", p.enabled},
          {"selector", selector},
          {"max_checkpoints", Nullable(p.max_checkpoints)},
          {"owner", p.owner},
          {"created_ms", p.created_ms},
          {"last_run_ms", Nullable(p.last_run_ms)}};
}

Result<PhaseDurations> PhasesIn(const nlohmann::json& phases) {
  constexpr size_t kMaxPhases = 32, kMaxName = 32;
  const Status invalid = InvalidArgumentError(
      "phases: want at most 32 items of {\"phase\": a name of 1-32 characters, \"ms\": 0 or "
      "more}");
  if (phases.is_array() && phases.size() > kMaxPhases) return invalid;
  Result<PhaseDurations> parsed = ParsePhaseDurations(phases);
  if (!parsed.has_value()) return invalid;
  for (const auto& [name, ms] : *parsed)
    if (name.empty() || name.size() > kMaxName) return invalid;
  return parsed;
}

nlohmann::json ToJson(const OperationRecord& o) {
  return {{"id", o.id},
          {"kind", NameOf(kOperationKindNames, o.kind)},
          {"job_id", Nullable(o.job_id)},
          {"checkpoint_id", Nullable(o.checkpoint_id)},
          {"node", o.node},
          {"policy_id", Nullable(o.policy_id)},
          {"reason", o.reason},
          {"owner", o.owner},
          {"state", NameOf(kOperationStateNames, o.state)},
          {"phase", o.phase},
          {"done_bytes", o.done_bytes},
          {"total_bytes", o.total_bytes},
          {"error", Nullable(o.error)},
          {"created_ms", o.created_ms},
          {"finished_ms", Nullable(o.finished_ms)},
          {"phases", PhaseDurationsJson(o.phases_ms)}};
}

nlohmann::json ToJson(const NodeRecord& n, int64_t now_ms) {
  return {{"name", n.name},
          {"version", n.version},
          {"last_seen_ms", n.last_seen_ms},
          {"status", now_ms - n.last_seen_ms < kNodeDownAfterMs ? "up" : "down"}};
}

nlohmann::json ToJson(const TokenRecord& t) {
  return {{"id", t.id}, {"user", t.user}, {"admin", t.admin}, {"created_ms", t.created_ms}};
}

// Request bodies come from the network: bounded nesting (common/bounded_json.h), as for the
// node daemon's socket.
Result<nlohmann::json> ParseBody(const std::string& body) {
  Result<nlohmann::json> j = ParseBoundedJson(body.empty() ? "{}" : body);
  if (!j.has_value()) return InvalidArgumentError("the request body: " + j.error().message());
  if (!j->is_object()) return InvalidArgumentError("the request body is not a JSON object");
  return j;
}

Result<PolicyRecord> PolicyFromJson(const nlohmann::json& body) {
  PolicyRecord p;
  const auto name = body.find("name");
  if (name == body.end() || !name->is_string())
    return InvalidArgumentError("policy name is missing (a string of 1 to 64 characters)");
  p.name = name->get<std::string>();
  if (p.name.empty() || p.name.size() > 64)
    return InvalidArgumentError("policy name must have 1 to 64 characters");
  for (char c : p.name) {
    bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ' ';
    if (!ok)
      return InvalidArgumentError(
          fmt::format("policy name \"{}\": use letters, digits, '-', '_', '.' and spaces", p.name));
  }
  const auto interval = body.find("interval_seconds");
  if (interval == body.end() || !interval->is_number_integer())
    return InvalidArgumentError("interval_seconds is missing (an integer from 10 to 2592000)");
  p.interval_seconds = interval->get<int64_t>();
  if (p.interval_seconds < 10 || p.interval_seconds > 2592000)
    return InvalidArgumentError(fmt::format(
        "interval_seconds {} is out of range (valid: 10 to 2592000, i.e. 10 s to 30 days)",
        p.interval_seconds));
  if (auto e = body.find("enabled"); e != body.end()) {
    if (!e->is_boolean()) return InvalidArgumentError("enabled must be true or false");
    p.enabled = e->get<bool>();
  }
  if (auto m = body.find("max_checkpoints"); m != body.end() && !m->is_null()) {
    if (!m->is_number_integer() || m->get<int64_t>() < 1 || m->get<int64_t>() > 1000)
      return InvalidArgumentError("max_checkpoints must be null or an integer from 1 to 1000");
    p.max_checkpoints = m->get<int64_t>();
  }
  if (auto s = body.find("selector"); s != body.end() && !s->is_null()) {
    if (!s->is_object()) return InvalidArgumentError("selector must be an object");
    CEDANA_ASSIGN_OR_RETURN(p.selector, SelectorFromJson(s->dump()));
  }
  return p;
}

}  // namespace cedana::controller
