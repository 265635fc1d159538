#include "job_proxy/time_limit.h"

#include <fmt/format.h>

namespace cedana::job_proxy {

namespace {
int64_t LeadMs(const TimeLimitInput& in, const TimeLimitPolicy& policy) {
  int64_t checkpoint_ms =
      in.last_checkpoint_ms > 0 ? in.last_checkpoint_ms : kUnmeasuredCheckpointMs;
  return checkpoint_ms + int64_t{policy.margin_seconds} * 1000;
}
}  // namespace

std::time_t TimeLimitActsAt(const TimeLimitInput& in, const TimeLimitPolicy& policy) {
  if (in.end_time <= 0) return 0;
  // Whole seconds, rounded down: DecideTimeLimit acts once end - now <= lead.
  return in.end_time - static_cast<std::time_t>(LeadMs(in, policy) / 1000);
}

TimeLimitAction DecideTimeLimit(const TimeLimitInput& in, const TimeLimitPolicy& policy) {
  if (in.end_time <= 0) return TimeLimitAction::kWait;
  if ((static_cast<int64_t>(in.end_time) - static_cast<int64_t>(in.now)) * 1000 >
      LeadMs(in, policy))
    return TimeLimitAction::kWait;
  return WhyNoRequeue(in, policy).empty() && in.job_asks_requeue
             ? TimeLimitAction::kCheckpointAndRequeue
             : TimeLimitAction::kCheckpointAndRunOn;
}

std::string WhyNoRequeue(const TimeLimitInput& in, const TimeLimitPolicy& policy) {
  if (!in.job_asks_requeue) return "";
  if (!policy.site_allows_requeue)
    return "the site does not requeue jobs at their time limit (slurm.requeue_on_timeout is off)";
  if (in.restart_count >= static_cast<uint32_t>(policy.max_restarts))
    return fmt::format("the job was restarted {} times already (slurm.max_restarts is {})",
                       in.restart_count, policy.max_restarts);
  return "";
}

}  // namespace cedana::job_proxy
