#include "daemon/job_steps.h"

#include <poll.h>
#include <unistd.h>

#include <charconv>

#include <fmt/format.h>

namespace cedana::daemon {

JobSteps::~JobSteps() {
  for (auto& [name, step] : steps_)
    if (step.srun_pidfd >= 0) ::close(step.srun_pidfd);
}

Status JobSteps::Begin(const std::string& workload_id) {
  std::lock_guard<std::mutex> lock(mu_);
  PerWorkload& w = workloads_[workload_id];
  if (w.checkpointing)
    return AbortedError(fmt::format(
        "a checkpoint of workload {} is being taken; ask again when it is done", workload_id));
  ++w.in_flight;
  return OkStatus();
}

void JobSteps::End(const std::string& workload_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --workloads_[workload_id].in_flight;
  }
  changed_.notify_all();
}

void JobSteps::Add(JobStep step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Steps whose srun ended are of no more use.
    for (auto it = steps_.begin(); it != steps_.end();) {
      if (!Ended(it->second)) {
        ++it;
        continue;
      }
      if (it->second.srun_pidfd >= 0) ::close(it->second.srun_pidfd);
      it = steps_.erase(it);
    }
    std::string name = step.name;
    steps_[name] = std::move(step);
  }
  changed_.notify_all();
}

std::optional<JobStep> JobSteps::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = steps_.find(name);
  if (it == steps_.end()) return std::nullopt;
  return it->second;
}

void JobSteps::NotCaptured(const std::string& name, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = steps_.find(name); it != steps_.end() && it->second.not_captured.empty())
      it->second.not_captured = why;
  }
  changed_.notify_all();
}

void JobSteps::AddKeeper(const std::string& name, int rank, const StepKeeper& keeper,
                         const JobStep& placement) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = steps_.find(name);
    if (it == steps_.end()) return;
    it->second.keepers[rank] = keeper;
    PlaceLocked(&it->second, placement);
  }
  changed_.notify_all();
}

void JobSteps::Place(const std::string& name, const JobStep& placement) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = steps_.find(name); it != steps_.end()) PlaceLocked(&it->second, placement);
}

void JobSteps::PlaceLocked(JobStep* s, const JobStep& placement) {
  if (placement.expected_tasks > 0) s->expected_tasks = placement.expected_tasks;
  if (placement.all_tasks > 0) s->all_tasks = placement.all_tasks;
  if (placement.nodes > 0) s->nodes = placement.nodes;
  if (!placement.node_list.empty()) s->node_list = placement.node_list;
  if (!placement.node_name.empty()) s->node_name = placement.node_name;
}

int TasksOnNode(std::string_view per_node, int node_index) {
  int first = 0;  // the first node the next group speaks of
  while (!per_node.empty()) {
    const size_t comma = per_node.find(',');
    std::string_view group = per_node.substr(0, comma);
    per_node = comma == std::string_view::npos ? "" : per_node.substr(comma + 1);
    int tasks = 0, times = 1;
    auto [end, ec] = std::from_chars(group.data(), group.data() + group.size(), tasks);
    if (ec != std::errc()) return 0;
    std::string_view rest(end, group.data() + group.size() - end);
    if (rest.starts_with("(x")) {
      auto [e2, ec2] = std::from_chars(rest.data() + 2, rest.data() + rest.size(), times);
      if (ec2 != std::errc() || e2 != rest.data() + rest.size() - 1 || rest.back() != ')') return 0;
    } else if (!rest.empty()) {
      return 0;
    }
    if (node_index < first + times) return node_index >= first ? tasks : 0;
    first += times;
  }
  return 0;
}

bool JobSteps::Ended(const JobStep& s) const {
  if (s.srun_pidfd < 0) return true;  // it was gone before we could watch it
  pollfd p{s.srun_pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

std::string JobSteps::Unsettled(const std::string& workload_id,
                                const std::function<bool(pid_t relay)>& relay_settled,
                                bool* never) const {
  *never = false;
  auto w = workloads_.find(workload_id);
  if (w != workloads_.end() && w->second.in_flight > 0)
    return fmt::format("{} srun request(s) of the job are being served", w->second.in_flight);
  for (const auto& [name, s] : steps_) {
    if (s.workload_id != workload_id || Ended(s)) continue;
    const std::string what = fmt::format("step `{}`", fmt::join(s.argv, " "));
    if (!s.not_captured.empty()) {
      *never = true;
      return fmt::format("{} runs outside the job's processes ({})", what, s.not_captured);
    }
    // No task here yet, and its srun runs: its tasks may all be on other nodes, of which this
    // node learns only from its own tasks (docs/architecture.md, "Steps over several nodes").
    if (!s.restored && s.expected_tasks == 0 && relay_settled(s.relay_pid))
      return fmt::format(
          "{} has no task on this node yet: it is starting, or all its tasks run on other nodes, "
          "which is not checkpointed (a step needs a task on the batch script's node)",
          what);
    if (!s.restored &&
        (s.expected_tasks == 0 || static_cast<int>(s.keepers.size()) < s.expected_tasks))
      return fmt::format(
          "{} is starting ({} of {} tasks)", what, s.keepers.size(),
          s.expected_tasks == 0 ? std::string("?") : std::to_string(s.expected_tasks));
    if (!relay_settled(s.relay_pid)) return fmt::format("{} is starting (its srun relay)", what);
  }
  return "";
}

Status JobSteps::HoldForCheckpoint(const std::string& workload_id, std::chrono::milliseconds wait,
                                   const std::function<bool(pid_t relay)>& relay_settled) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    bool never = false;
    std::string why = Unsettled(workload_id, relay_settled, &never);
    if (why.empty()) break;
    if (never) return UnsupportedError(why);
    // Keepers are added by requests this wakes on; a relay becomes its waiter without telling
    // us, so look again every 50 ms.
    if (changed_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                         std::chrono::milliseconds(50))) ==
            std::cv_status::timeout &&
        std::chrono::steady_clock::now() >= deadline)
      return UnavailableError(why + "; try again in a moment");
  }
  workloads_[workload_id].checkpointing = true;
  return OkStatus();
}

void JobSteps::CheckpointDone(const std::string& workload_id) {
  std::lock_guard<std::mutex> lock(mu_);
  workloads_[workload_id].checkpointing = false;
}

std::vector<JobStep> JobSteps::Running(const std::string& workload_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JobStep> out;
  for (const auto& [name, s] : steps_)
    if (s.workload_id == workload_id && !Ended(s)) out.push_back(s);
  return out;
}

void JobSteps::Forget(const std::string& workload_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = steps_.begin(); it != steps_.end();) {
    if (it->second.workload_id != workload_id) {
      ++it;
      continue;
    }
    if (it->second.srun_pidfd >= 0) ::close(it->second.srun_pidfd);
    it = steps_.erase(it);
  }
  workloads_.erase(workload_id);
}

}  // namespace cedana::daemon
