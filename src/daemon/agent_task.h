// AgentTask: one operation the controller hands this node (GET /v1/agent/tasks), read with
// typed reads, so that a malformed one is refused by name instead of throwing in the agent's
// operation thread.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace cedana::daemon {

struct AgentTask {
  int64_t id = 0;
  std::string kind;  // dump | restore (the agent refuses another)
  std::string job;   // the SLURM job id, "" when none
  std::string owner;
  std::string checkpoint_id;
  std::string reason = "manual";  // a dump's (common/checkpoint_reason.h)
};

// kInvalidArgument naming the field: no object, an id that is no positive integer, a field of
// the wrong type. Null checkpoint_id, job_id and reason are absent.
Result<AgentTask> ReadAgentTask(const nlohmann::json& op);

}  // namespace cedana::daemon
