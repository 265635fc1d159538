// SLURM job ids as the node daemon accepts them: what a job id named in a request may look
// like. Shared by the daemon's request parser (protocol/daemon_request.h), its job registry
// and its agent. Stateless.
#pragma once

#include <string>

#include "common/status.h"

namespace cedana {

// kInvalidArgument unless job_id is a SLURM job number (1 to 10 digits).
Status ValidateJobId(const std::string& job_id);

}  // namespace cedana
