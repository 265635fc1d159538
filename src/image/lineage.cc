#include "image/lineage.h"

#include <fmt/format.h>

#include <ctime>

#include <nlohmann/json.hpp>

#include "common/log.h"

namespace cedana::image {

std::string LineageEndToJson(const LineageEnd& end) {
  return nlohmann::json{{"owner", end.owner},
                        {"label", end.label},
                        {"finished_at_ms", end.finished_at_ms},
                        {"exit_code", end.exit_code},
                        {"workload_id", end.workload_id},
                        {"job_id", end.job_id},
                        {"node", end.node}}
      .dump(2);
}

Result<LineageEnd> ParseLineageEnd(const std::string& json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return InvalidArgumentError("lineage record is not a JSON object");
  LineageEnd end;
  auto text = [&](const char* key, std::string* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      return InvalidArgumentError(fmt::format("lineage record: \"{}\" must be a string", key));
    *out = it->get<std::string>();
    return OkStatus();
  };
  CEDANA_RETURN_IF_ERROR(text("owner", &end.owner));
  CEDANA_RETURN_IF_ERROR(text("label", &end.label));
  auto at = j.find("finished_at_ms");
  if (at == j.end() || !at->is_number_integer())
    return InvalidArgumentError("lineage record: \"finished_at_ms\" must be an integer");
  end.finished_at_ms = at->get<int64_t>();
  if (auto code = j.find("exit_code"); code != j.end() && code->is_number_integer())
    end.exit_code = code->get<int>();
  (void)text("workload_id", &end.workload_id);  // informational
  (void)text("job_id", &end.job_id);
  (void)text("node", &end.node);
  return end;
}

bool OfFinishedRun(int64_t created_at_ms, const std::optional<LineageEnd>& end) {
  return end.has_value() && created_at_ms <= end->finished_at_ms;
}

std::string DescribeEnd(const LineageEnd& end) {
  std::time_t secs = static_cast<std::time_t>(end.finished_at_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return fmt::format("label {}: its last run finished at {} (exit {})", end.label, when,
                     end.exit_code);
}

namespace {
constexpr char kFinishedRunNote[] = "; its checkpoints are kept and can be restored by id";
}  // namespace

Status FinishedRunError(const LineageEnd& end) {
  return NotFoundError(DescribeEnd(end) + kFinishedRunNote);
}

bool IsFinishedRun(const Status& s) {
  const std::string& m = s.message();
  return s.code() == Code::kNotFound && m.size() > sizeof kFinishedRunNote &&
         m.compare(m.size() - (sizeof kFinishedRunNote - 1), std::string::npos, kFinishedRunNote) ==
             0;
}

Result<std::optional<LineageEnd>> ReadLineageEnd(storage::CheckpointStore& store,
                                                 const std::string& owner,
                                                 const std::string& label) {
  Result<std::string> text = store.ReadLineage(owner, label);
  if (!text.has_value()) {
    if (text.error().code() == Code::kNotFound) return std::optional<LineageEnd>();
    return text.error();
  }
  Result<LineageEnd> end = ParseLineageEnd(*text);
  if (!end.has_value())
    return end.error().WithContext(owner + "/" + label + " in " + store.Describe());
  if (end->owner != owner || end->label != label)
    return InvalidArgumentError(fmt::format("lineage record of {}/{} in {} names {}/{}", owner,
                                            label, store.Describe(), end->owner, end->label));
  return std::optional<LineageEnd>(std::move(end).value());
}

Status WriteLineageEnd(storage::CheckpointStore& store, const LineageEnd& end) {
  return store.WriteLineage(end.owner, end.label, LineageEndToJson(end))
      .WithContext(
          fmt::format("recording the end of label {}'s run in {}", end.label, store.Describe()));
}

Result<std::optional<LineageEnd>> LineageEnds::Of(const std::string& owner,
                                                  const std::string& label) {
  auto key = std::make_pair(owner, label);
  auto it = read_.find(key);
  if (it == read_.end()) {
    Result<std::optional<LineageEnd>> end = ReadLineageEnd(store_, owner, label);
    Entry e;
    if (end.has_value()) e.end = *end;
    else e.status = end.error();
    it = read_.emplace(key, std::move(e)).first;
  }
  if (!it->second.status.ok()) return it->second.status;
  return it->second.end;
}

std::optional<LineageEnd> LineageEnds::OrOpen(const std::string& owner, const std::string& label,
                                              const char* who) {
  bool first = read_.find(std::make_pair(owner, label)) == read_.end();
  Result<std::optional<LineageEnd>> end = Of(owner, label);
  if (end.has_value()) return *end;
  if (first) log::Warn("{}: {}", who, end.error().ToString());
  return std::nullopt;
}

}  // namespace cedana::image
