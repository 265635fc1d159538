// libslurm set-up, for every part of cedana-slurm that talks to slurmctld (the controller's
// watchers, the job proxy). libslurm exits the whole process (fatal) when it finds no
// configuration, so the file is looked for first.
#pragma once

#include "common/result.h"

namespace cedana::slurm {

// kFailedPrecondition when there is no readable slurm.conf ($SLURM_CONF or
// /etc/slurm/slurm.conf); otherwise initialises libslurm once.
Status InitLibslurm();

}  // namespace cedana::slurm
