// How often the job proxy asks slurmctld about its own job (SlurmJob::Load: two RPCs each).
// Without SLURM's notice of preemption it must ask twice a second, or a preemption would eat
// into the grace time; at 5,000 jobs that is 20,000 RPCs a second. With the notice
// (job_submit/cedana's SIGUSR1, sent by slurmctld under preempt_send_user_signal) a preemption
// arrives as a signal, and the proxy asks only every 30 s, for a changed time limit or as a
// fallback, and at the moment its time limit needs a checkpoint. A pure decision.
#pragma once

#include <chrono>
#include <ctime>

namespace cedana::job_proxy {

inline constexpr std::chrono::milliseconds kPollWithoutNotice{500};
inline constexpr std::chrono::milliseconds kPollWithNotice{30'000};

// The wait until the next ask. `acts_at`: when the time limit first needs a checkpoint
// (TimeLimitActsAt), 0 for none.
std::chrono::milliseconds NextPollIn(bool preempt_notice, std::time_t now, std::time_t acts_at);

}  // namespace cedana::job_proxy
