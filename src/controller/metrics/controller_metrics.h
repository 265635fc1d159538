// The controller's /metrics: what the catalog knows, in Prometheus's text format. Checkpoints
// are those indexed from storage (all of them, whoever asked: preemption, scancel, time limit,
// policy, maintenance, by hand), so they are gauges; operations (the dumps and restores the
// controller asked node daemons for) are never deleted, so they are counters. No label names a
// user or a job: the endpoint needs no token.
#pragma once

#include <string>

#include "controller/catalog/catalog.h"

namespace cedana::controller {

// Renders `figures` (Catalog::Figures).
std::string RenderControllerMetrics(const CatalogFigures& figures);

}  // namespace cedana::controller
