// Maintenance windows (the seeds' "Maintenance Windows"): an administrator creates a SLURM
// reservation with flags=maint on some nodes; before it starts, every CEDANA_ENABLE job running
// on those nodes is moved off them. The move is a requeue: SLURM ends the job (its proxy
// checkpoints it on the SIGTERM, as for scancel) and schedules it again, on another node or,
// when none is free, once the reservation has ended; it then resumes from its checkpoint.
// Without JobRequeue=1 SLURM cannot requeue, so the job is only checkpointed (and keeps
// running into the window), with a warning.
//
// PlanMaintenance is the decision, without I/O: what each window's status is now, what to warn
// about, and which jobs to move. The controller's watcher feeds it from libslurm and the
// catalog and carries the plan out.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "controller/catalog/catalog.h"
#include "controller/watch/slurm_reservations.h"

namespace cedana::controller {

struct MaintenanceInputs {
  std::vector<SlurmReservation> reservations;  // all of slurmctld's, MAINT or not
  std::vector<WindowRecord> known;             // the catalog's windows
  std::vector<JobRecord> jobs;                 // the catalog's jobs (enabled, agent_node)
  std::vector<MoveRecord> moves;               // moves made so far
  bool requeue_enabled = true;                 // slurm.conf JobRequeue
  int64_t now = 0;                             // seconds since the epoch
  int64_t lead_seconds = 60;                   // how long before the start jobs are moved
};

struct PlannedMove {
  std::string window;
  JobRecord job;
};

struct MaintenancePlan {
  std::vector<WindowRecord> windows;  // every window whose record is new or changed
  std::vector<PlannedMove> moves;
};

// Whether two SLURM host lists share a node (HostListsOverlap; a plain function in tests).
using HostOverlap = std::function<bool(const std::string&, const std::string&)>;

MaintenancePlan PlanMaintenance(const MaintenanceInputs& in, const HostOverlap& overlap);

}  // namespace cedana::controller
