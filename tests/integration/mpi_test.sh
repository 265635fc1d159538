#!/bin/bash
# An MPI job on one node, launched by MPICH's mpiexec (hydra) inside the workload: 2 ranks that
# exchange data every step (tests/workloads/mpi_ring.c), checkpointed part-way and restored; the
# final digest must equal an uninterrupted run's. The launcher, its proxy and the ranks talk
# over loopback TCP and shared memory, all inside the tree.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
STEPS=80
mpicc -O2 -o "$T/mpi_ring" "$WORKLOADS/mpi_ring.c" || { fail "mpicc failed (is mpich installed?)"; finish; }
expect=$(mpiexec -n 2 "$T/mpi_ring" "$STEPS" | grep -o 'final digest [0-9a-f]*')
check "an uninterrupted run gives a digest ($expect)" test -n "$expect"

w=$("$CEDANA" run --label mpi --output "$T/mpi.out" -- mpiexec -n 2 "$T/mpi_ring" "$STEPS" 2>/dev/null)
check "the MPI job runs under cedana" wait_for 30 at_least "$T/mpi.out" "step " 10
ck=$(dump_id "$w")
check "mpiexec, its proxy and both ranks are checkpointed together" test -n "$ck"
n=$(last_number "$T/mpi.out" "step ")
r=$(restore_id "$ck")
check "restored" test -n "$r"
check "the ranks go on exchanging from step $n" wait_for 20 at_least "$T/mpi.out" "step " $((${n:-0} + 5))
check "the job ends by itself" wait_for 60 grep -q "final digest" "$T/mpi.out"
check "with the uninterrupted run's digest" grep -q "$expect" "$T/mpi.out"
check "its steps without a gap or repeat" sequence_ok "$T/mpi.out" "step "
finish
