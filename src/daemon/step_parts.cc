#include "daemon/step_parts.h"

#include <condition_variable>
#include <set>

#include <fmt/format.h>

#include "common/log.h"
#include "common/srun_relay.h"
#include "daemon/checkpointer.h"
#include "slurm/running_slurm.h"

namespace cedana::daemon {
namespace {

// How long a part waits, stored, for the batch node's word before it is dropped and its tasks
// continue; how long the batch node waits for another node's dump (a large part takes a while).
constexpr std::chrono::minutes kWordWait{5};
constexpr std::chrono::seconds kPartsDumpWait{600};
constexpr std::chrono::seconds kDecideWait{120};

}  // namespace

std::string PartsVariable(const nlohmann::json& parts) {
  std::string out;
  if (!parts.is_array()) return out;
  for (const nlohmann::json& p : parts) {
    if (!out.empty()) out += ';';
    out += StepPartsEntry(p.value("rank", 0), p.value("label", ""), p.value("checkpoint_id", ""));
  }
  return out;
}

Result<std::unique_ptr<RemoteParts>> RemoteParts::Begin(NodeContext& node,
                                                        const std::string& workload_id,
                                                        const std::string& checkpoint_id,
                                                        const DumpOptions& options) {
  std::set<std::string> others;
  for (const JobStep& s : node.steps().Running(workload_id)) {
    if (s.nodes <= 1) continue;
    CEDANA_ASSIGN_OR_RETURN(std::vector<std::string> names, slurm::Hostnames(s.node_list));
    for (const std::string& n : names)
      if (n != s.node_name) others.insert(n);
  }
  if (others.empty()) return std::unique_ptr<RemoteParts>();
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, node.records().LoadSpec(workload_id));
  const int port = node.config().node.daemon_peer_port;
  if (port == 0)
    return UnsupportedError(
        "a step of the job runs tasks on other nodes, and daemon.peer_port is 0 here: the other "
        "nodes' daemons cannot be asked for their part");
  std::unique_ptr<RemoteParts> parts(new RemoteParts(node, workload_id, checkpoint_id));
  const nlohmann::json request = {{"job_id", spec.job_id},
                                  {"round", checkpoint_id},
                                  {"leave_running", options.leave_running},
                                  {"reason", options.reason}};
  for (const std::string& name : others) {
    Node n;
    n.name = name;
    CEDANA_ASSIGN_OR_RETURN(n.address, slurm::NodeAddress(name));
    n.answer = std::async(std::launch::async, [address = n.address, port, request] {
      return CallPeer(address, port, "dump_parts", request, kPartsDumpWait);
    });
    parts->nodes_.push_back(std::move(n));
  }
  log::Info("dump: workload {}: its steps' tasks on {} are dumped there too", workload_id,
            fmt::join(others, ", "));
  return parts;
}

RemoteParts::~RemoteParts() {
  if (!decided_) Decide(false);
}

Status RemoteParts::Collect(image::Manifest* m) {
  nlohmann::json found = nlohmann::json::array();
  for (Node& n : nodes_) {
    Result<nlohmann::json> a = n.answer.get();
    if (!a.has_value()) return a.error().WithContext("the job's tasks on node " + n.name);
    for (nlohmann::json p : a->value("parts", nlohmann::json::array())) {
      p["node"] = n.name;
      found.push_back(std::move(p));
    }
  }
  if (!m->workload.contains("steps")) return OkStatus();
  for (const JobStep& s : node_.steps().Running(workload_id_)) {
    if (s.nodes <= 1) continue;
    nlohmann::json mine = nlohmann::json::array();
    for (const nlohmann::json& p : found)
      if (IsPartOfStep(p.value("label", ""), s.lineage)) mine.push_back(p);
    const size_t tasks = s.keepers.size() + mine.size();
    if (s.all_tasks > 0 && tasks < static_cast<size_t>(s.all_tasks))
      return UnavailableError(fmt::format(
          "step `{}`: {} of its {} tasks were found ({} here, {} on its other nodes); try again "
          "in a moment",
          fmt::join(s.argv, " "), tasks, s.all_tasks, s.keepers.size(), mine.size()));
    for (nlohmann::json& described : m->workload["steps"])
      if (described.value("lineage", "") == s.lineage) described["parts"] = mine;
  }
  return OkStatus();
}

void RemoteParts::Commit() { Decide(true); }

void RemoteParts::Decide(bool commit) {
  decided_ = true;
  const int port = node_.config().node.daemon_peer_port;
  for (Node& n : nodes_) {
    // Its dump must have answered first: the word is for a round that exists.
    if (n.answer.valid()) (void)n.answer.get();
    Result<nlohmann::json> a = CallPeer(n.address, port, "decide_parts",
                                        {{"round", round_}, {"commit", commit}}, kDecideWait);
    if (!a.has_value())
      log::Warn("dump: checkpoint {}: {} the job's parts on node {}: {}", round_,
                commit ? "committing" : "dropping", n.name, a.error().ToString());
  }
}

Status CheckPartsCommitted(storage::CheckpointStore& store, const std::string& owner,
                           const nlohmann::json& steps) {
  if (!steps.is_array()) return OkStatus();
  for (const nlohmann::json& s : steps)
    for (const nlohmann::json& p : s.value("parts", nlohmann::json::array())) {
      storage::CheckpointRef ref{owner, p.value("label", ""), p.value("checkpoint_id", "")};
      if (Result<std::string> m = store.ReadManifest(ref); !m.has_value())
        return NotFoundError(fmt::format(
            "the job's part on node {} (task {}, checkpoint {} of label {}) is not committed: {}",
            p.value("node", "?"), p.value("rank", 0), ref.id, ref.label, m.error().message()));
    }
  return OkStatus();
}

// One dump_parts request: the job's parts on this node, dumped at once, each waiting stored
// for the batch node's word.
struct StepPartsService::Round {
  std::mutex mu;
  std::condition_variable changed;
  int unstored = 0;  // dumps neither stored nor failed yet
  int running = 0;   // dumps not yet returned
  std::optional<bool> commit;
  nlohmann::json parts = nlohmann::json::array();
  std::vector<std::string> errors;
};

StepPartsService::~StepPartsService() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, round] : rounds_) {
    std::lock_guard<std::mutex> l(round->mu);
    if (!round->commit) round->commit = false;
    round->changed.notify_all();
  }
}

void StepPartsService::Serve(PeerServer& server) {
  server.Handle("dump_parts", [this](const nlohmann::json& r) { return DumpParts(r); });
  server.Handle("decide_parts", [this](const nlohmann::json& r) { return DecideParts(r); });
}

Result<nlohmann::json> StepPartsService::DumpParts(const nlohmann::json& request) {
  const std::string job_id = request.value("job_id", ""), round_id = request.value("round", "");
  if (job_id.empty() || round_id.empty())
    return InvalidArgumentError("dump_parts: job_id and round are required");
  // The job's workloads here: its parts (a batch script of it runs on one node only, the
  // asking one).
  std::vector<std::pair<std::string, int>> parts;  // workload id, rank
  CEDANA_ASSIGN_OR_RETURN(std::vector<WorkloadSpec> running, node_.records().RunningOfJob(job_id));
  for (const WorkloadSpec& spec : running)
    if (spec.slurm_script.empty()) parts.emplace_back(spec.id, RankOfStepPart(spec.label));
  if (parts.empty()) return nlohmann::json{{"parts", nlohmann::json::array()}};

  auto round = std::make_shared<Round>();
  round->unstored = round->running = static_cast<int>(parts.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (rounds_.contains(round_id))
      return AlreadyExistsError("dump_parts: round " + round_id + " is under way already");
    rounds_[round_id] = round;
  }
  for (const auto& [workload_id, rank] : parts) {
    DumpOptions o;
    o.workload_id = workload_id;
    o.leave_running = request.value("leave_running", false);
    o.reason = request.value("reason", "manual");
    dumps_.Start([this, round, round_id, o, job_id, rank = rank]() mutable {
      bool stored = false, unheard = false;
      o.before_commit = [&](image::Manifest* m) -> Status {
        std::unique_lock<std::mutex> lock(round->mu);
        stored = true;
        round->parts.push_back({{"label", m->label}, {"checkpoint_id", m->id}, {"rank", rank}});
        --round->unstored;
        round->changed.notify_all();
        if (!round->changed.wait_for(lock, kWordWait, [&] { return round->commit.has_value(); })) {
          round->commit = false;  // the round's other parts too
          round->changed.notify_all();
          unheard = true;
          return AbortedError(
              "the batch node did not say within 5 minutes whether the job's checkpoint was "
              "committed: this part is dropped and its task continues");
        }
        return *round->commit ? OkStatus() : AbortedError("the job's checkpoint was not committed");
      };
      Result<DumpOutcome> out = Checkpointer(node_).Dump(Caller{}, o, {});
      if (unheard) {  // no decide_parts will take the round away
        std::lock_guard<std::mutex> l(mu_);
        if (auto it = rounds_.find(round_id); it != rounds_.end() && it->second == round)
          rounds_.erase(it);
      }
      std::lock_guard<std::mutex> lock(round->mu);
      if (!out.has_value()) {
        log::Warn("step parts: job {}: task {} (workload {}): {}", job_id, rank, o.workload_id,
                  out.error().ToString());
        round->errors.push_back(
            fmt::format("task {} (workload {}): {}", rank, o.workload_id, out.error().message()));
        if (!stored) --round->unstored;
      }
      --round->running;
      round->changed.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(round->mu);
  round->changed.wait(lock, [&] { return round->unstored == 0; });
  if (round->errors.empty()) return nlohmann::json{{"parts", round->parts}};
  // One failed: the others are dropped too, and the job's checkpoint fails on the batch node.
  round->commit = false;
  round->changed.notify_all();
  round->changed.wait(lock, [&] { return round->running == 0; });
  const std::string why = fmt::format("{}", fmt::join(round->errors, "; "));
  lock.unlock();
  std::lock_guard<std::mutex> l(mu_);
  rounds_.erase(round_id);
  return UnavailableError(why);
}

Result<nlohmann::json> StepPartsService::DecideParts(const nlohmann::json& request) {
  const std::string round_id = request.value("round", "");
  std::shared_ptr<Round> round;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rounds_.find(round_id);
    // No parts here, or a failed round (answered and removed already).
    if (it == rounds_.end()) return nlohmann::json{{"committed", 0}};
    round = it->second;
    rounds_.erase(it);
  }
  std::unique_lock<std::mutex> lock(round->mu);
  const bool commit = request.value("commit", false);
  if (!round->commit) round->commit = commit;
  round->changed.notify_all();
  round->changed.wait(lock, [&] { return round->running == 0; });
  if (commit && !round->errors.empty())
    return UnavailableError(fmt::format("{}", fmt::join(round->errors, "; ")));
  return nlohmann::json{{"committed", commit ? round->parts.size() : 0}};
}

}  // namespace cedana::daemon
