// RegisterBatchJob: task_cedana.so's one exchange with the node daemon: "slurmd is launching
// batch job J of uid U" (op slurm_job_start), one request line and one result line over the
// daemon's unix socket, all within `deadline`. The request and the reply are the protocol's own
// types (protocol/daemon_request.h, protocol/daemon_reply.h). Kept apart from task_cedana.cc so
// that SLURM's internal headers and ours never meet in one translation unit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace cedana::plugins {

// "" when the daemon registered the job; otherwise what went wrong, for slurmd's log.
std::string RegisterBatchJob(const std::string& socket_path, uint32_t job_id, uint32_t uid,
                             std::chrono::milliseconds deadline);

}  // namespace cedana::plugins
