// A workload's own directory for OpenMPI's files. Every workload has its own PID namespace, so
// its mpirun's pid is the same small number in each; OpenMPI names its session directory
// (/tmp/ompi.<host>.<uid>/pid.<pid>) and its shared-memory segments
// (/dev/shm/vader_segment.<host>.<jobid from that pid>.<rank>) after it, and two OpenMPI jobs on
// one node shared them: one crashed, or its checkpoint failed. The node daemon gives each
// workload a directory of its own in /dev/shm and points both there (OMPI_MCA_orte_tmpdir_base,
// OMPI_MCA_btl_vader_backing_directory), unless the job set either. The directory keeps its
// path across checkpoints (the restored processes have it open and in their environment), so
// the checkpoint names it and a restore makes it again where it is missing. It goes, when
// empty, once the run has ended (OpenMPI removes its files at MPI_Finalize); files a killed or
// checkpointed job left keep it, as OpenMPI's own files stayed in /dev/shm before.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::daemon {

// "/dev/shm/cedana-mpi-<workload id>".
std::string MpiScratchDirFor(const std::string& workload_id);

// Whether `path` is one MpiScratchDirFor makes (it comes back from a checkpoint at a restore).
bool IsMpiScratchDir(const std::string& path);

// Points OpenMPI at `dir` in `env` (KEY=VALUE) unless it sets either variable itself, and keeps
// OpenMPI's posix shmem component closed (OMPI_MCA_shmem=^posix) unless it sets
// OMPI_MCA_shmem: that component leaves a deleted /dev/shm file open whose ghost copy two
// concurrent restores would both make at one path. Returns the names added, for
// CEDANA_ADDED_ENV.
std::vector<std::string> AddMpiScratchEnv(std::vector<std::string>* env, const std::string& dir);

// Makes `dir` (mode 0700, owned by uid:gid). One that exists must be that already: /dev/shm is
// anyone's, and a directory another user placed there would let them read and write the job's
// shared memory. kFailedPrecondition, naming what is there, when it is not.
Status PrepareMpiScratch(const std::string& dir, uid_t uid, gid_t gid);

// Removes `dir` if it is empty (never its contents).
void RemoveMpiScratchIfEmpty(const std::string& dir);

}  // namespace cedana::daemon
