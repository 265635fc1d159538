// SlurmJob: what the job proxy asks SLURM about its own job, and asks of it, through libslurm.
// Not thread-safe; one per proxy.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#include "common/result.h"

namespace cedana::job_proxy {

struct JobState {
  // slurmctld has decided to preempt the job (its preempt_time is set): SLURM 22.05 does not
  // signal a batch script at preemption, so the proxy polls for this.
  bool preempted = false;
  std::time_t preempt_time = 0;  // when (the grace time starts then); 0 when not preempted
  std::time_t end_time = 0;      // when SLURM ends it (its time limit); 0 when unlimited
  uint32_t restart_count = 0;    // requeues so far
  bool cancelled = false;        // scancel: its state is CANCELLED
  // `scontrol requeue` (a maintenance move too): slurmctld makes a requeued job PENDING (and
  // COMPLETING) before it signals the running one, or flags it REQUEUE.
  bool requeueing = false;
};

// What the proxy needs of slurmctld's configuration, loaded once (one RPC).
struct SlurmctldSettings {
  // preempt_send_user_signal (SlurmctldParameters): then a job with a --signal gets it when a
  // preemption begins (job_polling.h).
  bool sends_preempt_notice = false;
  // KillWait: how long after SIGTERM (scancel, requeue) SLURM kills the job.
  uint32_t kill_wait_seconds = 30;
};

class SlurmJob {
 public:
  explicit SlurmJob(uint32_t job_id);
  Result<JobState> Load();
  // Puts the (running) job back into the queue, as `scontrol requeue` does; its owner may.
  Status Requeue();
  // One RPC each.
  Result<SlurmctldSettings> LoadSlurmctldSettings();
  // The GraceTime of `partition`: how long after a preemption begins SLURM ends the job.
  Result<uint32_t> GraceSeconds(const std::string& partition);

 private:
  uint32_t job_id_;
  Status libslurm_;  // slurm::InitLibslurm's: every call fails with it when SLURM has no config
};

}  // namespace cedana::job_proxy
