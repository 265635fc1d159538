// PrometheusText: metrics in the text format Prometheus scrapes (exposition format 0.0.4): each
// family's HELP and TYPE once, then its samples; histograms as cumulative buckets, sum and
// count. Label values are escaped. Not thread-safe: one per scrape. The controller's /metrics
// (controller/metrics) and the node daemon's (daemon/node_metrics.h) are written with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cedana {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// A histogram kept as counts per bucket, for a process that observes values as they come
// (PrometheusText::Histogram with a list of values is for figures read at the scrape).
struct HistogramCounts {
  explicit HistogramCounts(std::vector<double> upper_bounds);
  void Add(double value);

  std::vector<double> bounds;    // ascending upper bounds, +Inf implied
  std::vector<uint64_t> counts;  // per bucket (not cumulative), one more than bounds for +Inf
  double sum = 0;
  uint64_t count = 0;
};

class PrometheusText {
 public:
  // Starts a family: type is "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const MetricLabels& labels, double value);
  // `values` counted into buckets with upper bounds `bounds` (ascending), plus +Inf.
  void Histogram(std::string_view name, const MetricLabels& labels,
                 const std::vector<double>& bounds, const std::vector<double>& values);
  void Histogram(std::string_view name, const MetricLabels& labels, const HistogramCounts& h);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace cedana
