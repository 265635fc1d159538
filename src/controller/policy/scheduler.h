// Policy scheduling: which running, cedana-managed jobs a policy selects, and when each of them
// is due for its next leave-running dump. The scheduler only queues operations; the node daemon
// that manages the job claims and runs them. Stateless functions over the catalog.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

// All given selector fields must match; name_pattern is a shell glob ('*', '?'). A policy
// created with a user token selects only its owner's jobs.
bool Matches(const PolicyRecord& policy, bool owner_is_admin, const JobRecord& job);

// Queues a dump for every job a policy selects whose last dump by that policy is at least
// the interval old (or, without one, whose policy or job start is). Skips jobs with an
// operation in flight. Returns how many operations it queued.
Result<int> SchedulePolicies(Catalog& catalog, int64_t now_ms);

// After a policy's dump finished: keeps the newest max_checkpoints checkpoints the policy made
// for that label, and returns the ids of the older ones to delete.
std::vector<std::string> PolicyCheckpointsToDelete(const PolicyRecord& policy,
                                                   const std::vector<CheckpointRecord>& of_label);

}  // namespace cedana::controller
