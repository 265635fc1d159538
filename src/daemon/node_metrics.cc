#include "daemon/node_metrics.h"

#include "common/version.h"

namespace cedana::daemon {
namespace {

// Seconds: a small dump freezes for a tenth of a second, a large one's store takes minutes.
const std::vector<double> kPhaseBounds = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

// A counter family whose samples are keyed by two labels.
void CounterFamily(PrometheusText& out, const char* name, const char* help,
                   std::pair<const char*, const char*> labels,
                   const std::map<std::pair<std::string, std::string>, uint64_t>& counts) {
  out.Family(name, "counter", help);
  for (const auto& [key, n] : counts)
    out.Sample(name, {{labels.first, key.first}, {labels.second, key.second}},
               static_cast<double>(n));
}

}  // namespace

std::string ResultOf(const Status& status) {
  switch (status.code()) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kFailedPrecondition:
    case Code::kPermissionDenied:
    case Code::kUnsupported: return "refused";
    default: return "failed";
  }
}

std::string CauseOf(const Status& status) {
  std::string cause(CodeName(status.code()));
  for (char& c : cause)
    if (c == ' ') c = '_';
  return cause;
}

void NodeMetrics::Record(const std::string& operation, const Status& result,
                         const PhaseDurations& phases) {
  if (ResultOf(result) == "refused") ++refusals_[{operation, CauseOf(result)}];
  for (const auto& [phase, ms] : phases) {
    auto [it, added] = phases_.try_emplace({operation, phase}, kPhaseBounds);
    it->second.Add(static_cast<double>(ms) / 1000);
  }
}

void NodeMetrics::RecordDump(const std::string& reason, const Status& result,
                             const PhaseDurations& phases, uint64_t stored_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++dumps_[{ResultOf(result), reason}];
  stored_bytes_ += stored_bytes;
  Record("dump", result, phases);
}

void NodeMetrics::RecordRestore(const std::string& reason, const Status& result,
                                const PhaseDurations& phases) {
  std::lock_guard<std::mutex> lock(mu_);
  ++restores_[{ResultOf(result), reason.empty() ? "unknown" : reason}];
  Record("restore", result, phases);
}

std::string NodeMetrics::Text() const {
  std::lock_guard<std::mutex> lock(mu_);
  PrometheusText out;
  out.Family("cedana_node_info", "gauge", "The node daemon's version.");
  out.Sample("cedana_node_info", {{"version", kVersion}}, 1);
  CounterFamily(out, "cedana_node_dumps_total",
                "Checkpoints this daemon made or tried since it started, by result (ok, refused, "
                "failed) and reason.",
                {"result", "reason"}, dumps_);
  CounterFamily(out, "cedana_node_restores_total",
                "Restores this daemon made or tried since it started, by result and the reason "
                "of the checkpoint they resumed (unknown when none was).",
                {"result", "reason"}, restores_);
  CounterFamily(out, "cedana_node_refusals_total",
                "Dumps and restores turned down before they touched the workload, by cause.",
                {"operation", "cause"}, refusals_);
  out.Family("cedana_node_stored_bytes_total", "counter",
             "Bytes the checkpoints this daemon made stored (after compression).");
  out.Sample("cedana_node_stored_bytes_total", {}, static_cast<double>(stored_bytes_));
  out.Family("cedana_node_phase_duration_seconds", "histogram",
             "How long each phase of a dump (queue, prepare, freeze, store, commit, finish) or "
             "a restore (unpack, prepare, restore, verify) took.");
  for (const auto& [key, counts] : phases_)
    out.Histogram("cedana_node_phase_duration_seconds",
                  {{"operation", key.first}, {"phase", key.second}}, counts);
  return out.text();
}

}  // namespace cedana::daemon
