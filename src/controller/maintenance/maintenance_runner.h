// Carries out PlanMaintenance against the real world: reads MAINT reservations and JobRequeue
// through libslurm, records windows and moves in the catalog, requeues jobs (or, without
// JobRequeue, queues a leave-running checkpoint through the job's node daemon), and logs each
// status change, warning and move once. Runs on the controller's watcher thread.
#pragma once

#include <string>

#include "common/config.h"
#include "common/result.h"
#include "controller/catalog/catalog.h"

namespace cedana::controller {

Status RunMaintenanceStep(const ControllerConfig& config, Catalog& catalog);

}  // namespace cedana::controller
