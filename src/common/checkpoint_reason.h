// Why a checkpoint was taken (manifest field "reason"): what the job's owner and the UI see for
// each checkpoint. Requests name a reason; a manifest keeps any text (a newer build's reason
// must not make its checkpoints unreadable here). Stateless.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cedana {

// preemption   SLURM preempts the job (it is requeued, or cancelled, after the checkpoint)
// scancel      its owner or an administrator cancelled it (SIGTERM, job state CANCELLED)
// requeue      `scontrol requeue`, a maintenance move of the controller, or the node's end
// time_limit   the job reached its time limit
// policy       a periodic checkpoint policy of the controller
// maintenance  the controller's move off a maintenance window on a cluster that cannot requeue
// manual       `cedana dump`, "checkpoint now" in the UI or the API
// termination  SIGTERM for any other reason (a node shutting down)
inline constexpr std::array<std::string_view, 8> kCheckpointReasons = {
    "preemption", "scancel",     "requeue", "time_limit",
    "policy",     "maintenance", "manual",  "termination"};

// kInvalidArgument naming the reasons when `reason` is none of them.
Status ValidateCheckpointReason(std::string_view reason);

// "time limit" for time_limit: the reason as a phrase in a sentence.
std::string ReasonPhrase(std::string_view reason);

}  // namespace cedana
