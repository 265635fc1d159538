#include "controller/metrics/controller_metrics.h"

#include <gtest/gtest.h>

#include "common/prometheus_text.h"

namespace cedana::controller {
namespace {

TEST(PrometheusText, FamiliesSamplesAndEscapedLabels) {
  PrometheusText out;
  out.Family("x_total", "counter", "Things.\nCounted.");
  out.Sample("x_total", {{"kind", "a\"b\\c\nd"}}, 3);
  out.Sample("x_total", {}, 0.5);
  EXPECT_EQ(out.text(),
            "# HELP x_total Things.\\nCounted.\n# TYPE x_total counter\n"
            "x_total{kind=\"a\\\"b\\\\c\\nd\"} 3\nx_total 0.5\n");
}

TEST(PrometheusText, HistogramBucketsAreCumulative) {
  PrometheusText out;
  out.Histogram("d_seconds", {{"phase", "freeze"}}, {1, 10}, {0.5, 1, 5, 50});
  EXPECT_EQ(out.text(),
            "d_seconds_bucket{phase=\"freeze\",le=\"1\"} 2\n"
            "d_seconds_bucket{phase=\"freeze\",le=\"10\"} 3\n"
            "d_seconds_bucket{phase=\"freeze\",le=\"+Inf\"} 4\n"
            "d_seconds_sum{phase=\"freeze\"} 56.5\n"
            "d_seconds_count{phase=\"freeze\"} 4\n");
}

std::unique_ptr<Catalog> MemoryCatalog() {
  auto db = OpenDatabase("sqlite::memory:");
  EXPECT_TRUE(db.has_value());
  EXPECT_TRUE(Migrate(**db).ok());
  return std::make_unique<Catalog>(std::move(db).value());
}

CheckpointRecord Checkpoint(std::string id, std::string reason, int64_t size, int64_t frozen_ms) {
  CheckpointRecord c;
  c.id = std::move(id);
  c.owner = "alice";
  c.label = "sim";
  c.created_ms = 1;
  c.size = size;
  c.state = "good";
  c.location = "/ckpt";
  c.reason = std::move(reason);
  c.frozen_ms = frozen_ms;
  c.duration_ms = frozen_ms * 3;
  return c;
}

TEST(ControllerMetrics, FromTheCatalog) {
  auto catalog = MemoryCatalog();
  ASSERT_TRUE(catalog->checkpoints().Upsert(Checkpoint("c1", "preemption", 1000, 200)).ok());
  ASSERT_TRUE(catalog->checkpoints().Upsert(Checkpoint("c2", "preemption", 500, 3000)).ok());
  ASSERT_TRUE(catalog->checkpoints().Upsert(Checkpoint("c3", "", 7, 10)).ok());
  OperationRecord op;
  op.kind = OperationKind::kDump;
  op.node = "n1";
  op.owner = "alice";
  op.reason = "policy";
  for (OperationState state :
       {OperationState::kDone, OperationState::kFailed, OperationState::kQueued}) {
    auto created = catalog->operations().Create(op);  // queued
    ASSERT_TRUE(created.has_value());
    created->state = state;
    ASSERT_TRUE(catalog->operations().Update(*created).ok());
  }
  ASSERT_TRUE(catalog->nodes().Touch("n1", "0.1.0").ok());
  ManagedJob job;
  job.job_id = 7;
  job.label = "sim";
  job.user = "alice";
  job.status = "running";
  ASSERT_TRUE(catalog->jobs().SyncManaged("n1", {job}).ok());

  auto figures = catalog->Figures(0);
  ASSERT_TRUE(figures.has_value()) << figures.error().ToString();
  std::string text = RenderControllerMetrics(*figures);
  for (const char* line : {
           "cedana_checkpoints{reason=\"preemption\"} 2\n",
           "cedana_checkpoints{reason=\"unknown\"} 1\n",
           "cedana_checkpoint_stored_bytes{reason=\"preemption\"} 1500\n",
           "cedana_checkpoint_duration_seconds_bucket{phase=\"freeze\",reason=\"preemption\","
           "le=\"0.25\"} 1\n",
           "cedana_checkpoint_duration_seconds_count{phase=\"total\",reason=\"preemption\"} 2\n",
           "cedana_checkpoint_duration_seconds_sum{phase=\"freeze\",reason=\"preemption\"} 3.2\n",
           "cedana_operations_total{kind=\"dump\",state=\"done\",reason=\"policy\"} 1\n",
           "cedana_operations_total{kind=\"dump\",state=\"failed\",reason=\"policy\"} 1\n",
           "cedana_operations_total{kind=\"dump\",state=\"queued\",reason=\"policy\"} 1\n",
           "cedana_operation_duration_seconds_count{kind=\"dump\",state=\"done\"} 1\n",
           "cedana_operation_duration_seconds_count{kind=\"dump\",state=\"failed\"} 1\n",
           "cedana_managed_jobs{status=\"running\"} 1\n",
           "cedana_nodes{state=\"known\"} 1\n",
           "cedana_nodes{state=\"reporting\"} 1\n",
           "# TYPE cedana_checkpoint_duration_seconds histogram\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing " << line << "in\n" << text;
  auto later = catalog->Figures(NowMs() + 1000);
  ASSERT_TRUE(later.has_value());
  EXPECT_NE(RenderControllerMetrics(*later).find("cedana_nodes{state=\"reporting\"} 0\n"),
            std::string::npos)
      << "a node not seen since is not reporting";
}

}  // namespace
}  // namespace cedana::controller
