#include "controller/policy/scheduler.h"

#include <fnmatch.h>

#include <set>

#include "common/log.h"

namespace cedana::controller {

bool Matches(const PolicyRecord& policy, bool owner_is_admin, const JobRecord& job) {
  const PolicySelector& s = policy.selector;
  if (!owner_is_admin && job.user != policy.owner) return false;
  if (s.job_id && *s.job_id != job.job_id) return false;
  if (!s.user.empty() && s.user != job.user) return false;
  if (!s.partition.empty() && s.partition != job.partition) return false;
  if (!s.label.empty() && s.label != job.label) return false;
  if (!s.name_pattern.empty() && fnmatch(s.name_pattern.c_str(), job.name.c_str(), 0) != 0)
    return false;
  return true;
}

Result<int> SchedulePolicies(Catalog& catalog, int64_t now_ms) {
  CEDANA_ASSIGN_OR_RETURN(auto policies, catalog.policies().List(std::nullopt));
  if (policies.empty()) return 0;
  CEDANA_ASSIGN_OR_RETURN(auto jobs, catalog.jobs().List(std::nullopt));
  CEDANA_ASSIGN_OR_RETURN(auto active, catalog.operations().List(std::nullopt, std::nullopt, 500));
  std::set<int64_t> busy;  // jobs with a queued or running operation
  for (const auto& o : active)
    if (!IsFinal(o.state) && o.job_id) busy.insert(*o.job_id);
  int queued = 0;
  for (const PolicyRecord& p : policies) {
    if (!p.enabled) continue;
    for (const JobRecord& j : jobs) {
      if (j.state != "RUNNING" || !j.enabled || j.agent_node.empty() || busy.count(j.job_id))
        continue;
      if (!Matches(p, p.owner_is_admin, j)) continue;
      CEDANA_ASSIGN_OR_RETURN(auto last, catalog.operations().LastDump(j.job_id, p.id));
      int64_t since = last ? last->created_ms : std::max(p.created_ms, j.start_time * 1000);
      if (now_ms - since < p.interval_seconds * 1000) continue;
      OperationRecord op;
      op.kind = OperationKind::kDump;
      op.job_id = j.job_id;
      op.node = j.agent_node;
      op.policy_id = p.id;
      op.reason = "policy";
      op.owner = j.user;
      CEDANA_ASSIGN_OR_RETURN(OperationRecord created, catalog.operations().Create(op));
      CEDANA_RETURN_IF_ERROR(catalog.policies().SetLastRun(p.id, now_ms));
      busy.insert(j.job_id);
      ++queued;
      log::Info("policy: \"{}\" queued dump {} of job {} on {}", p.name, created.id, j.job_id,
                j.agent_node);
    }
  }
  return queued;
}

std::vector<std::string> PolicyCheckpointsToDelete(const PolicyRecord& policy,
                                                   const std::vector<CheckpointRecord>& of_label) {
  std::vector<std::string> out;
  if (!policy.max_checkpoints) return out;
  int64_t kept = 0;
  for (const auto& c : of_label) {  // newest first
    if (c.policy_id != policy.id) continue;
    if (++kept > *policy.max_checkpoints) out.push_back(c.id);
  }
  return out;
}

}  // namespace cedana::controller
