// libslurm set-up shared by every watcher that talks to slurmctld. libslurm exits the whole
// process (fatal) when it finds no configuration, so the file is looked for first.
#pragma once

#include "common/result.h"

namespace cedana::controller {

// kFailedPrecondition when there is no readable slurm.conf ($SLURM_CONF or
// /etc/slurm/slurm.conf); otherwise initialises libslurm once.
Status InitLibslurm();

}  // namespace cedana::controller
