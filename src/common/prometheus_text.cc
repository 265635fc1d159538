#include "common/prometheus_text.h"

#include <fmt/format.h>

namespace cedana {
namespace {

std::string Escaped(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string LabelText(const MetricLabels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i)
    out +=
        fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", labels[i].first, Escaped(labels[i].second));
  return out + "}";
}

}  // namespace

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
  std::string escaped_help;
  for (char c : help) escaped_help += c == '\n' ? std::string("\\n") : std::string(1, c);
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escaped_help, name, type);
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels, double value) {
  text_ += fmt::format("{}{} {}\n", name, LabelText(labels), value);
}

void PrometheusText::Histogram(std::string_view name, const MetricLabels& labels,
                               const std::vector<double>& bounds,
                               const std::vector<double>& values) {
  HistogramCounts h(bounds);
  for (double v : values) h.Add(v);
  Histogram(name, labels, h);
}

void PrometheusText::Histogram(std::string_view name, const MetricLabels& labels,
                               const HistogramCounts& h) {
  auto with_le = [&](const std::string& le) {
    MetricLabels l = labels;
    l.emplace_back("le", le);
    return l;
  };
  uint64_t at_most = 0;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    at_most += h.counts[i];
    Sample(fmt::format("{}_bucket", name), with_le(fmt::format("{}", h.bounds[i])),
           static_cast<double>(at_most));
  }
  Sample(fmt::format("{}_bucket", name), with_le("+Inf"), static_cast<double>(h.count));
  Sample(fmt::format("{}_sum", name), labels, h.sum);
  Sample(fmt::format("{}_count", name), labels, static_cast<double>(h.count));
}

HistogramCounts::HistogramCounts(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void HistogramCounts::Add(double value) {
  size_t i = 0;
  while (i < bounds.size() && value > bounds[i]) ++i;
  ++counts[i];
  sum += value;
  ++count;
}

}  // namespace cedana
