#include "daemon/node_metrics.h"

#include <gtest/gtest.h>

namespace cedana::daemon {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(NodeMetrics, ResultsAndCauses) {
  EXPECT_EQ(ResultOf(OkStatus()), "ok");
  EXPECT_EQ(ResultOf(UnsupportedError("a TCP connection to a peer outside the tree")), "refused");
  EXPECT_EQ(ResultOf(PermissionDeniedError("not yours")), "refused");
  EXPECT_EQ(ResultOf(UnavailableError("criu died")), "failed");
  EXPECT_EQ(ResultOf(DeadlineExceededError("too slow")), "failed");
  EXPECT_EQ(CauseOf(FailedPreconditionError("x")), "failed_precondition");
}

TEST(NodeMetrics, CountsDumpsRestoresRefusalsBytesAndPhases) {
  NodeMetrics m;
  m.RecordDump("preemption", OkStatus(), {{"freeze", 300}, {"store", 1200}}, 1000);
  m.RecordDump("preemption", OkStatus(), {{"freeze", 700}, {"store", 2000}}, 500);
  m.RecordDump("policy", UnsupportedError("TCP"), {}, 0);
  m.RecordDump("manual", UnavailableError("criu"), {}, 0);
  m.RecordRestore("preemption", OkStatus(), {{"unpack", 100}, {"restore", 400}});
  m.RecordRestore("", NotFoundError("no checkpoint"), {});
  std::string t = m.Text();
  EXPECT_TRUE(Has(t, "# TYPE cedana_node_dumps_total counter")) << t;
  EXPECT_TRUE(Has(t, "cedana_node_dumps_total{result=\"ok\",reason=\"preemption\"} 2")) << t;
  EXPECT_TRUE(Has(t, "cedana_node_dumps_total{result=\"refused\",reason=\"policy\"} 1")) << t;
  EXPECT_TRUE(Has(t, "cedana_node_dumps_total{result=\"failed\",reason=\"manual\"} 1")) << t;
  EXPECT_TRUE(Has(t, "cedana_node_restores_total{result=\"ok\",reason=\"preemption\"} 1")) << t;
  EXPECT_TRUE(Has(t, "cedana_node_restores_total{result=\"refused\",reason=\"unknown\"} 1")) << t;
  EXPECT_TRUE(Has(t, "cedana_node_refusals_total{operation=\"dump\",cause=\"unsupported\"} 1"));
  EXPECT_TRUE(Has(t, "cedana_node_refusals_total{operation=\"restore\",cause=\"not_found\"} 1"));
  EXPECT_TRUE(Has(t, "cedana_node_stored_bytes_total 1500")) << t;
  // 0.3 s and 0.7 s: one in the 0.5 s bucket, both in the 1 s one; the sum is 1 s.
  EXPECT_TRUE(Has(t,
                  "cedana_node_phase_duration_seconds_bucket{operation=\"dump\",phase=\"freeze\","
                  "le=\"0.5\"} 1"))
      << t;
  EXPECT_TRUE(Has(t,
                  "cedana_node_phase_duration_seconds_bucket{operation=\"dump\",phase=\"freeze\","
                  "le=\"1\"} 2"));
  EXPECT_TRUE(
      Has(t, "cedana_node_phase_duration_seconds_sum{operation=\"dump\",phase=\"freeze\"} 1"));
  EXPECT_TRUE(Has(t,
                  "cedana_node_phase_duration_seconds_count{operation=\"restore\","
                  "phase=\"unpack\"} 1"));
}

TEST(HistogramCounts, BucketsByUpperBound) {
  HistogramCounts h({1, 2});
  for (double v : {0.5, 1.0, 1.5, 3.0}) h.Add(v);
  EXPECT_EQ(h.counts, (std::vector<uint64_t>{2, 1, 1}));
  EXPECT_EQ(h.count, 4u);
  EXPECT_DOUBLE_EQ(h.sum, 6.0);
}

}  // namespace
}  // namespace cedana::daemon
