// What the job proxy does as its job's time limit nears (docs/slurm.md, "Time limits"): a
// checkpoint early enough to be committed before SLURM ends the job (the label's last
// checkpoint's duration plus a margin before the end time), then, when the job asks for it
// (CEDANA_REQUEUE_ON_TIMEOUT=1), the site allows it (slurm.requeue_on_timeout) and the job has
// restarts left (slurm.max_restarts), a requeue, so that the job resumes and runs on through
// the limit. A pure decision; stateless.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace cedana::job_proxy {

// The estimate of a label's first checkpoint, before one was measured.
inline constexpr int64_t kUnmeasuredCheckpointMs = 10'000;

struct TimeLimitPolicy {  // the node daemon's config
  bool site_allows_requeue = false;
  int max_restarts = 10;
  int margin_seconds = 20;
};

struct TimeLimitInput {
  std::time_t now = 0;
  std::time_t end_time = 0;        // 0: the job has no time limit
  int64_t last_checkpoint_ms = 0;  // 0: none measured yet
  bool job_asks_requeue = false;   // CEDANA_REQUEUE_ON_TIMEOUT=1
  uint32_t restart_count = 0;
};

enum class TimeLimitAction {
  kWait,                  // not yet, or no limit
  kCheckpointAndRequeue,  // stop at a checkpoint, requeue: the job resumes
  kCheckpointAndRunOn,    // keep running after a checkpoint; SLURM ends the job at its limit
};

TimeLimitAction DecideTimeLimit(const TimeLimitInput& in, const TimeLimitPolicy& policy);
// The first time DecideTimeLimit stops waiting (in.now is not used); 0 for a job without a limit.
std::time_t TimeLimitActsAt(const TimeLimitInput& in, const TimeLimitPolicy& policy);
// Why a job that asked to be requeued is not (empty when it is, or did not ask).
std::string WhyNoRequeue(const TimeLimitInput& in, const TimeLimitPolicy& policy);

}  // namespace cedana::job_proxy
