// SlurmJobRegistry: which user each SLURM job on this node belongs to, as slurmd said so.
// task_cedana.so runs inside slurmd (root) and, when slurmd launches a batch job with
// CEDANA_ENABLE, registers the job's id and uid here before the job's first process exists.
// A job proxy that later names a job id is believed only for a job registered to its own uid:
// without this, a user could attach their workload to another user's job number (docs/
// security.md, D5). Entries are files <state_dir>/slurm-jobs/<job id> holding the uid, so a
// restarted daemon keeps them; a requeued job is registered again with the same id.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "common/job_id.h"
#include "common/result.h"

namespace cedana::daemon {

class SlurmJobRegistry {
 public:
  explicit SlurmJobRegistry(std::string dir) : dir_(std::move(dir)) {}

  // Records (or replaces) the job's owner. job_id must be a SLURM job number.
  Status Register(const std::string& job_id, uid_t uid) const;
  // The registered owner, nullopt when slurmd never registered the job here.
  std::optional<uid_t> OwnerOf(const std::string& job_id) const;

 private:
  std::string dir_;
};

}  // namespace cedana::daemon
