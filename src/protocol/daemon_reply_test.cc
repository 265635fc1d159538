#include "protocol/daemon_reply.h"

#include <gtest/gtest.h>

#include "common/bounded_json.h"

namespace cedana::protocol {
namespace {

CheckpointSummary FullSummary() {
  CheckpointSummary c;
  c.id = "20261202-160745-0f631db0";
  c.label = "job-7";
  c.owner = "alice";
  c.owner_uid = 1000;
  c.created_at_ms = 1764690000000;
  c.duration_ms = 812;
  c.reason = "preemption";
  c.restart_count = 2;
  c.frozen_ms = 300;
  c.stored_bytes = 5ull << 32;  // past 32 bits
  c.images_bytes = 6ull << 32;
  c.codec = "zstd";
  c.streams = 4;
  c.raw_streams = 3;
  c.node = "node-a";
  c.job_id = "7";
  c.workload_id = "wl-3f9a0c12";
  c.location = "/var/lib/cedana/checkpoints/alice/job-7/20261202-160745-0f631db0";
  c.phases_ms = {{"queue", 0}, {"freeze", 300}, {"store", 480}, {"commit", 12}};
  return c;
}

StartedWorkload FullStart() {
  StartedWorkload w;
  w.id = "wl-3f9a0c12";
  w.pid = 4242;
  w.label = "job-7";
  w.stdout_path = "/home/alice/slurm-7.out";
  w.checkpoint_id = "20261202-160745-0f631db0";
  w.checkpoint_created_at_ms = 1764690000000;
  w.checkpoint_duration_ms = 812;
  w.checkpoint_reason = "scancel";
  w.skipped = {"20261202-160800-aaaaaaaa: manifest MAC mismatch"};
  w.time_limit = TimeLimitGrant{true, 3, 120};
  w.phases_ms = {{"unpack", 210}, {"prepare", 4}, {"restore", 380}, {"verify", 0}};
  return w;
}

// What the daemon sends arrives as an ok result line (wire.h): the parsers read that.
Message OverTheWire(const Message& reply) {
  Result<Message> parsed = ParseBoundedJson(EncodeMessage(OkResult(reply)));
  return parsed.has_value() ? *parsed : Message();
}

TEST(DaemonReplyTest, EveryReplyParsesBackToItself) {
  Result<CheckpointSummary> dump = ParseDumpReply(OverTheWire(EncodeReply(FullSummary())));
  ASSERT_TRUE(dump.has_value()) << dump.error().ToString();
  EXPECT_EQ(*dump, FullSummary());

  Result<StartedWorkload> started = ParseStartedWorkload(OverTheWire(EncodeReply(FullStart())));
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  EXPECT_EQ(*started, FullStart());

  CheckpointList list;
  list.dir = "s3://bucket/prefix";
  list.checkpoints = {FullSummary(), FullSummary()};
  list.checkpoints[0].location = "";
  list.checkpoints[0].state = "good";
  list.checkpoints[0].run = "open";
  list.checkpoints[1].state = "unverified";
  list.checkpoints[1].run = "finished";
  Result<CheckpointList> listed = ParseCheckpointList(OverTheWire(EncodeReply(list)));
  ASSERT_TRUE(listed.has_value()) << listed.error().ToString();
  EXPECT_EQ(*listed, list);

  WorkloadInfo w;
  w.id = "wl-1";
  w.label = "job-7";
  w.status = "exited";
  w.pid = 77;
  w.uid = 1000;
  w.user = "alice";
  w.argv = {"bash", "-c", "echo hi"};
  w.exit_code = 3;
  w.started_at_ms = 1764690000000;
  w.stdout_path = "/tmp/out";
  w.restored_from = "20261202-160745-0f631db0";
  w.job_id = "7";
  Result<WorkloadInfo> inspected = ParseInspectReply(OverTheWire(EncodeReply(w)));
  ASSERT_TRUE(inspected.has_value()) << inspected.error().ToString();
  EXPECT_EQ(*inspected, w);
  WorkloadList ps{{w, WorkloadInfo{}}};
  ps.workloads[1].id = "wl-unreadable";  // only its id: its records could not be read
  Result<WorkloadList> listed_ps = ParseWorkloadList(OverTheWire(EncodeReply(ps)));
  ASSERT_TRUE(listed_ps.has_value()) << listed_ps.error().ToString();
  EXPECT_EQ(*listed_ps, ps);

  const DaemonInfo info{"0.9.0", "/usr/local/bin/criu", "4.1.1", true, "/var/lib/cedana"};
  EXPECT_EQ(*ParseDaemonInfo(OverTheWire(EncodeReply(info))), info);
  EXPECT_EQ(*ParseSignalled(OverTheWire(EncodeReply(Signalled{"wl-1", 15}))),
            (Signalled{"wl-1", 15}));
  EXPECT_EQ(*ParseDeleted(OverTheWire(EncodeReply(Deleted{"ck-1"}))), Deleted{"ck-1"});

  Result<SlurmJobRegistered> job =
      ParseSlurmJobRegistered(OverTheWire(EncodeReply(SlurmJobRegistered{"81", 1000})));
  ASSERT_TRUE(job.has_value()) << job.error().ToString();
  EXPECT_EQ(*job, (SlurmJobRegistered{"81", 1000}));
}

// A fresh start names no checkpoint; a restore's reply carries no time-limit grant.
TEST(DaemonReplyTest, AbsentFieldsKeepTheirDefaults) {
  StartedWorkload fresh;
  fresh.id = "wl-1";
  fresh.pid = 10;
  fresh.fresh_reason = "the run of label x finished";
  Result<StartedWorkload> r = ParseStartedWorkload(OverTheWire(EncodeReply(fresh)));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, fresh);
  EXPECT_FALSE(r->time_limit.has_value());
  Result<StartedWorkload> bare = ParseStartedWorkload(Message{{"id", "wl-2"}});
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->id, "wl-2");
  EXPECT_TRUE(bare->checkpoint_id.empty());
}

TEST(DaemonReplyTest, AFieldOfTheWrongTypeIsNamed) {
  struct Case {
    Message reply;
    std::string field;
  };
  const Case cases[] = {
      {{{"id", 5}}, "id"},
      {{{"pid", "12"}}, "pid"},
      {{{"pid", -1}}, "pid"},
      {{{"skipped", "one"}}, "skipped"},
      {{{"time_limit", true}}, "time_limit"},
      {{{"time_limit", {{"requeue", "yes"}}}}, "requeue"},
  };
  for (const Case& c : cases) {
    Result<StartedWorkload> r = ParseStartedWorkload(c.reply);
    ASSERT_FALSE(r.has_value()) << c.reply.dump();
    EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
    EXPECT_NE(r.error().message().find("reply field \"" + c.field + "\""), std::string::npos)
        << r.error().message();
  }
  EXPECT_FALSE(ParseDumpReply(Message{{"checkpoint", "id"}}).has_value());
  EXPECT_FALSE(ParseDumpReply(Message{{"checkpoint", {{"stored_bytes", -5}}}}).has_value());
  EXPECT_FALSE(ParseDumpReply(Message{{"checkpoint", {{"phases", {{"freeze", 3}}}}}}).has_value());
  EXPECT_FALSE(
      ParseDumpReply(Message{{"checkpoint", {{"phases", {{{"phase", "freeze"}, {"ms", -1}}}}}}})
          .has_value());
  EXPECT_FALSE(ParseCheckpointList(Message{{"checkpoints", {1, 2}}}).has_value());
  EXPECT_FALSE(ParseSlurmJobRegistered(Message{{"uid", "root"}}).has_value());
  EXPECT_FALSE(ParseWorkloadList(Message{{"workloads", {{{"argv", "ls"}}}}}).has_value());
  EXPECT_FALSE(ParseInspectReply(Message{{"workload", {{"exit_code", -2}}}}).has_value());
  EXPECT_FALSE(ParseDaemonInfo(Message{{"no_breakpoints", 1}}).has_value());
}

}  // namespace
}  // namespace cedana::protocol
