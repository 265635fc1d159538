// `cedana dump ID|--pid PID|slurm JOBID [--leave-running|--stop] [--dir D] [--compression C]
// [--streams N] [--tcp-established|--tcp-close] [--profile FILE]`
#include <fmt/format.h>

#include "cli/cli_context.h"
#include "common/checkpoint_streams.h"
#include "common/fs.h"

namespace cedana::cli {
namespace {

// --profile: the checkpoint and its phases, in the order they ran.
Status WriteProfile(const std::string& path, const protocol::CheckpointSummary& c) {
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& [phase, ms] : c.phases_ms) phases.push_back({{"phase", phase}, {"ms", ms}});
  nlohmann::json profile = {{"operation", "dump"},
                            {"checkpoint_id", c.id},
                            {"total_ms", c.duration_ms},
                            {"frozen_ms", c.frozen_ms},
                            {"stored_bytes", c.stored_bytes},
                            {"images_bytes", c.images_bytes},
                            {"phases", phases}};
  return fs::WriteFileAtomic(path, profile.dump(2) + "\n", 0644)
      .WithContext("writing the profile " + path);
}

}  // namespace

void AddDumpCommand(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string id, job_id, dir, compression, label, profile;
    int pid = 0;
    int streams = 0;
    bool leave_running = false;
    bool stop = false;
    bool tcp_established = false, tcp_close = false;
  };
  auto* o = &ctx.Keep<Opts>();
  auto* dump =
      app.add_subcommand("dump", "Checkpoint a workload (stops it unless --leave-running)");
  dump->add_option("id", o->id, "Workload id (see `cedana ps`), or `slurm` followed by a job id");
  dump->add_option("jobid", o->job_id, "SLURM job id (after `slurm`)");
  dump->add_option("--pid,-p", o->pid, "Dump any process tree by its root pid instead");
  dump->add_flag("--leave-running,-R", o->leave_running,
                 "Keep the workload running after the dump");
  dump->add_flag("--stop", o->stop,
                 "For `dump slurm JOBID`: stop the job's workload after the dump");
  dump->add_option("--dir,-d", o->dir, "Checkpoint dir (path or s3://bucket/prefix)");
  dump->add_option("--compression,-c", o->compression, "none, gzip, lz4 or zstd");
  auto* streams = dump->add_option("--streams,-s", o->streams, "Number of parallel streams (1-64)");
  dump->add_option("--profile", o->profile,
                   "Write how long each phase took (queue, prepare, freeze, store, commit, finish) "
                   "to this file, as JSON");
  dump->add_option("--label,-l", o->label, "Label for this checkpoint (default: the workload's)");
  auto* established =
      dump->add_flag("--tcp-established", o->tcp_established,
                     "Restore TCP connections to peers outside the tree connected (same node)");
  dump->add_flag("--tcp-close", o->tcp_close,
                 "Restore TCP connections to peers outside the tree closed")
      ->excludes(established);
  dump->callback([&ctx, o, streams] {
    if (o->id == "slurm") {
      // A SLURM job's workload on this node; it keeps running unless --stop.
      if (o->job_id.empty()) {
        ctx.Fail(InvalidArgumentError("usage: cedana dump slurm JOBID"));
        return;
      }
      auto ps = ctx.Call(RequestOf(protocol::DaemonOp::kPs), protocol::ParseWorkloadList, false);
      if (!ps) return;
      o->id.clear();
      for (const protocol::WorkloadInfo& w : ps->workloads)
        if (w.job_id == o->job_id && w.status == "running") o->id = w.id;
      if (o->id.empty()) {
        ctx.Fail(NotFoundError("no running cedana workload of SLURM job " + o->job_id +
                               " on this node (is the job CEDANA_ENABLE=1 and running here?)"));
        return;
      }
      o->leave_running = !o->stop;
    } else if (!o->job_id.empty()) {
      ctx.Fail(InvalidArgumentError("unexpected argument " + o->job_id));
      return;
    }
    if (o->id.empty() == (o->pid == 0)) {
      ctx.Fail(InvalidArgumentError("give a workload id or --pid PID (one of them)"));
      return;
    }
    protocol::DaemonRequest req = RequestOf(protocol::DaemonOp::kDump, o->id);
    req.leave_running = o->leave_running;
    req.pid = o->pid;
    req.dir = o->dir;
    req.compression = o->compression;
    // 0 in a request means "the configured number": a 0 given here is refused, as the daemon would.
    if (streams->count() > 0 && (o->streams < 1 || o->streams > kMaxCheckpointStreams))
      return ctx.Fail(InvalidArgumentError(fmt::format("streams must be between 1 and {}, got {}",
                                                       kMaxCheckpointStreams, o->streams)));
    req.streams = o->streams;
    req.label = o->label;
    if (o->tcp_established) req.tcp = "established";
    if (o->tcp_close) req.tcp = "close";
    auto c = ctx.Call(req, protocol::ParseDumpReply);
    if (!c) return;
    std::printf("%s\n", c->id.c_str());
    // Streams whose memory did not compress are stored as they are (docs/storage.md).
    std::string raw = c->raw_streams == 0 ? ""
                      : c->raw_streams == c->streams
                          ? ", stored uncompressed: it does not compress"
                          : fmt::format(", {} of them uncompressed", c->raw_streams);
    std::fprintf(stderr,
                 "checkpoint %s: label %s, %s stored (%s of images, %s x%d%s), took %.2f s\n  %s\n",
                 c->id.c_str(), c->label.c_str(), HumanBytes(c->stored_bytes).c_str(),
                 HumanBytes(c->images_bytes).c_str(), c->codec.c_str(), c->streams, raw.c_str(),
                 c->duration_ms / 1000.0, c->location.c_str());
    // After the id: the checkpoint is made whether or not its profile can be written.
    if (!o->profile.empty())
      if (Status s = WriteProfile(o->profile, *c); !s.ok()) ctx.Fail(s);
  });
}

}  // namespace cedana::cli
