#include "daemon/agent.h"

#include <chrono>
#include <cstdint>

#include "common/checkpoint_reason.h"
#include "common/log.h"
#include "common/version.h"
#include "daemon/agent_task.h"
#include "daemon/checkpointer.h"
#include "daemon/slurm_job_registry.h"
#include "protocol/controller_client.h"
#include "protocol/field_reader.h"

namespace cedana::daemon {
namespace {

constexpr auto kPollInterval = std::chrono::seconds(2);

}  // namespace

Agent::Agent(NodeContext& node, std::string node_name)
    : node_(node), node_name_(std::move(node_name)) {}

Agent::~Agent() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  operations_.Wait(std::chrono::seconds(10), [](size_t n) {
    log::Info("agent: waiting for {} operation(s) of the controller to finish", n);
  });
}

void Agent::Start() {
  log::Info("agent: reporting to the controller at {} as node {}", node_.config().url, node_name_);
  thread_ = std::thread([this] { Loop(); });
}

void Agent::Loop() {
  bool reachable = true;
  while (!stop_) {
    try {
      if (Status s = Tick(); !s.ok()) {
        if (reachable)
          log::Warn("agent: {} (retrying every {} s)", s.ToString(), kPollInterval.count());
        reachable = false;
      } else {
        if (!reachable) log::Info("agent: the controller answers again");
        reachable = true;
      }
    } catch (const std::exception& e) {
      log::Error("agent: internal error: {}", e.what());
    }
    for (int i = 0; i < 20 && !stop_; ++i) std::this_thread::sleep_for(kPollInterval / 20);
  }
}

Status Agent::Tick() {
  protocol::ControllerClient client(node_.config().url, node_.config().auth_token);
  nlohmann::json workloads = nlohmann::json::array();
  if (auto ids = node_.records().List(); ids.has_value()) {
    for (const auto& id : *ids) {
      auto spec = node_.records().LoadSpec(id);
      auto state = node_.records().LoadState(id);
      if (!spec.has_value() || !state.has_value() || spec->job_id.empty()) continue;
      if (state->status != WorkloadStatus::kRunning) continue;
      // Validated digits when the workload was created (handlers.cc); records made by older
      // versions are skipped rather than trusted.
      if (!ValidateJobId(spec->job_id).ok()) continue;
      nlohmann::json w = {{"job_id", std::stoll(spec->job_id)},
                          {"label", spec->label},
                          {"user", UserName(spec->uid)},
                          {"status", StatusName(state->status)},
                          // The run, for the job's timeline: which restart, since when, from what.
                          {"restart_count", spec->restart_count},
                          {"started_at_ms", state->started_at_ms},
                          {"restored_from", spec->restored_from}};
      if (auto notice = node_.records().LoadNotice(id)) {
        w["notice"] = notice->text;
        w["notice_at_ms"] = notice->at_ms;
      }
      workloads.push_back(std::move(w));
    }
  }
  Result<nlohmann::json> r = client.Post(
      "/agent/workloads", {{"node", node_name_}, {"version", kVersion}, {"workloads", workloads}});
  if (!r.has_value()) return r.error();
  Result<nlohmann::json> tasks = client.Get("/agent/tasks?node=" + node_name_);
  if (!tasks.has_value()) return tasks.error();
  for (const auto& op : *tasks) operations_.Start([this, op] { RunOperation(op); });
  return OkStatus();
}

void Agent::RunOperation(const nlohmann::json& op) {
  protocol::ControllerClient client(node_.config().url, node_.config().auth_token);
  Result<AgentTask> task = ReadAgentTask(op);
  if (!task.has_value()) {
    log::Warn("agent: refusing an operation from the controller: {}", task.error().ToString());
    // Reported failed when its id can be read, so that it does not wait to go stale.
    int64_t bad_id = 0;
    if (protocol::FieldReader(op, "operation").Int("id", 1, INT64_MAX, &bad_id).ok() && bad_id > 0)
      (void)client.Post(
          "/agent/operations/" + std::to_string(bad_id),
          {{"state", "failed"}, {"phase", "failed"}, {"error", task.error().message()}});
    return;
  }
  const int64_t id = task->id;
  const std::string& kind = task->kind;
  std::string path = "/agent/operations/" + std::to_string(id);
  auto report = [&](const nlohmann::json& body) {
    if (auto r = client.Post(path, body); !r.has_value())
      log::Warn("agent: reporting operation {}: {}", id, r.error().ToString());
  };
  auto last_report = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto progress = [&](const std::string& phase, uint64_t done, uint64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_report < std::chrono::milliseconds(500)) return;
    last_report = now;
    report({{"state", "running"}, {"phase", phase}, {"done_bytes", done}, {"total_bytes", total}});
  };

  Status failure;
  nlohmann::json done = {{"state", "done"}, {"phase", "done"}};
  if (kind == "dump") {
    const std::string& job = task->job;
    auto running = node_.records().RunningOfJob(job);
    const WorkloadSpec* workload =
        running.has_value() && !running->empty() ? &running->front() : nullptr;
    // The controller's reason (a policy, a maintenance move, "checkpoint now"), checked as a
    // request's would be.
    const std::string& reason = task->reason;
    if (!workload) {
      failure = NotFoundError("job " + job + " has no running workload on node " + node_name_);
    } else if (Status valid = ValidateCheckpointReason(reason); !valid.ok()) {
      failure = valid;
    } else {
      DumpOptions options;
      options.workload_id = workload->id;
      options.leave_running = true;  // policies and "checkpoint now" never stop the job
      options.reason = reason;
      Caller root{0, 0, 0};
      // No deadline: a policy's or a maintenance move's dump waits for the preemptions'.
      DumpQueue::Slot slot = node_.dump_queue().Enter(DemandOf(node_, options, 0), {});
      Result<DumpOutcome> out = Checkpointer(node_).Dump(root, options, progress);
      if (out.has_value()) {
        slot.Succeeded();
        done["checkpoint_id"] = out->manifest.id;
        done["done_bytes"] = out->manifest.StoredBytes();
        done["total_bytes"] = out->manifest.StoredBytes();
        done["phases"] = PhaseDurationsJson(out->phases_ms);
        log::Info("agent: operation {}: checkpoint {} of job {} (leave-running)", id,
                  out->manifest.id, job);
      } else {
        failure = out.error();
      }
    }
  } else if (kind == "restore") {
    Result<uid_t> uid = UidOfUser(task->owner);
    if (!uid.has_value()) {
      failure = uid.error();
    } else {
      RestoreOptions options;
      options.checkpoint_id = task->checkpoint_id;
      Caller owner{*uid, 0, 0};
      Result<RestoreOutcome> out = Checkpointer(node_).Restore(owner, options, progress);
      if (out.has_value()) {
        done["checkpoint_id"] = out->checkpoint_id;
        done["phases"] = PhaseDurationsJson(out->phases_ms);
        log::Info("agent: operation {}: restored checkpoint {} as workload {}", id,
                  out->checkpoint_id, out->workload_id);
      } else {
        failure = out.error();
      }
    }
  } else {
    failure = InvalidArgumentError("unknown operation kind \"" + kind + "\"");
  }
  if (!failure.ok()) {
    log::Warn("agent: operation {} ({}) failed: {}", id, kind, failure.ToString());
    report({{"state", "failed"}, {"phase", "failed"}, {"error", failure.message()}});
    return;
  }
  report(done);
}

}  // namespace cedana::daemon
