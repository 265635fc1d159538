// PrometheusText: metrics in the text format Prometheus scrapes (exposition format 0.0.4): each
// family's HELP and TYPE once, then its samples; histograms as cumulative buckets, sum and
// count. Label values are escaped. Not thread-safe: one per scrape.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cedana::controller {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  // Starts a family: type is "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const MetricLabels& labels, double value);
  // `values` counted into buckets with upper bounds `bounds` (ascending), plus +Inf.
  void Histogram(std::string_view name, const MetricLabels& labels,
                 const std::vector<double>& bounds, const std::vector<double>& values);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace cedana::controller
