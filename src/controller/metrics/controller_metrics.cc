#include "controller/metrics/controller_metrics.h"

#include <map>
#include <tuple>

#include "common/prometheus_text.h"
#include "common/version.h"

namespace cedana::controller {
namespace {

// Seconds: a checkpoint's freeze is typically under a second, a large job's whole checkpoint
// minutes.
const std::vector<double> kDurationBounds = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900};

std::string ReasonLabel(const std::string& reason) { return reason.empty() ? "unknown" : reason; }

void Checkpoints(const CatalogFigures& f, PrometheusText& out) {
  std::map<std::string, std::pair<int64_t, int64_t>> by_reason;  // count, bytes
  std::map<std::string, std::vector<double>> frozen, total;
  for (const auto& c : f.checkpoints) {
    std::string reason = ReasonLabel(c.reason);
    by_reason[reason].first += 1;
    by_reason[reason].second += c.size;
    frozen[reason].push_back(static_cast<double>(c.frozen_ms) / 1000);
    total[reason].push_back(static_cast<double>(c.duration_ms) / 1000);
  }
  out.Family("cedana_checkpoints", "gauge", "Checkpoints in storage (indexed), by reason.");
  for (const auto& [reason, figures] : by_reason)
    out.Sample("cedana_checkpoints", {{"reason", reason}}, static_cast<double>(figures.first));
  out.Family("cedana_checkpoint_stored_bytes", "gauge",
             "Bytes the indexed checkpoints take in storage, by reason.");
  for (const auto& [reason, figures] : by_reason)
    out.Sample("cedana_checkpoint_stored_bytes", {{"reason", reason}},
               static_cast<double>(figures.second));
  out.Family("cedana_checkpoint_duration_seconds", "histogram",
             "How long the indexed checkpoints took, by phase: freeze (the job stopped) and total "
             "(start to commit).");
  for (const auto& [reason, values] : frozen)
    out.Histogram("cedana_checkpoint_duration_seconds", {{"phase", "freeze"}, {"reason", reason}},
                  kDurationBounds, values);
  for (const auto& [reason, values] : total)
    out.Histogram("cedana_checkpoint_duration_seconds", {{"phase", "total"}, {"reason", reason}},
                  kDurationBounds, values);
}

void Operations(const CatalogFigures& f, PrometheusText& out) {
  out.Family("cedana_operations_total", "counter",
             "Dumps and restores the controller asked node daemons for, by kind, state (queued, "
             "running, done, failed) and reason.");
  for (const auto& o : f.operations)
    out.Sample("cedana_operations_total",
               {{"kind", o.kind}, {"state", o.state}, {"reason", ReasonLabel(o.reason)}},
               static_cast<double>(o.count));
  std::map<std::tuple<std::string, std::string>, std::vector<double>> durations;
  for (const auto& o : f.finished)
    durations[{o.kind, o.state}].push_back(static_cast<double>(o.duration_ms) / 1000);
  out.Family("cedana_operation_duration_seconds", "histogram",
             "How long the finished operations took, asked to ended, by kind and result.");
  for (const auto& [key, values] : durations)
    out.Histogram("cedana_operation_duration_seconds",
                  {{"kind", std::get<0>(key)}, {"state", std::get<1>(key)}}, kDurationBounds,
                  values);
}

}  // namespace

std::string RenderControllerMetrics(const CatalogFigures& f) {
  PrometheusText out;
  out.Family("cedana_controller_info", "gauge", "The controller's version.");
  out.Sample("cedana_controller_info", {{"version", kVersion}}, 1);
  Checkpoints(f, out);
  Operations(f, out);
  out.Family("cedana_managed_jobs", "gauge",
             "SLURM jobs that node daemons manage (CEDANA_ENABLE=1), by status.");
  for (const auto& [status, count] : f.managed_jobs)
    out.Sample("cedana_managed_jobs", {{"status", status}}, static_cast<double>(count));
  out.Family("cedana_nodes", "gauge",
             "Node daemons the controller knows; reporting: seen in the last two minutes.");
  out.Sample("cedana_nodes", {{"state", "known"}}, static_cast<double>(f.nodes));
  out.Sample("cedana_nodes", {{"state", "reporting"}}, static_cast<double>(f.nodes_recent));
  return out.text();
}

}  // namespace cedana::controller
