#!/bin/bash
# MPI jobs on one node, launched inside the workload: 2 ranks that exchange data every step
# (tests/workloads/mpi_ring.c), checkpointed part-way and restored; the final digest must equal
# an uninterrupted run's. Launched by MPICH's mpiexec (hydra) and by OpenMPI's mpirun, with
# OpenMPI's shared-memory transport (vader) and with its TCP transport. The launcher, its
# daemons and the ranks talk over loopback TCP and shared memory, all inside the tree.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
STEPS=80
mpicc.mpich -O2 -o "$T/ring_mpich" "$WORKLOADS/mpi_ring.c" || { fail "mpicc.mpich failed (is mpich installed?)"; finish; }
mpicc.openmpi -O2 -o "$T/ring_openmpi" "$WORKLOADS/mpi_ring.c" || { fail "mpicc.openmpi failed (is libopenmpi-dev installed?)"; finish; }
expect=$(mpiexec.mpich -n 2 "$T/ring_mpich" "$STEPS" | grep -o 'final digest [0-9a-f]*')
check "an uninterrupted run gives a digest ($expect)" test -n "$expect"
OPENMPI=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2)

# ring_round NAME LAUNCHER...: the ring under LAUNCHER, checkpointed at step 10 and restored.
ring_round() {
  local name=$1 out="$T/$1.out" w ck n r; shift
  w=$("$CEDANA" run --label "$name" --output "$out" -- "$@" "$STEPS" 2>/dev/null)
  check "$name: the MPI job runs under cedana" wait_for 30 at_least "$out" "step " 10
  ck=$(dump_id "$w")
  check "$name: the launcher, its helpers and both ranks are checkpointed together" test -n "$ck"
  n=$(last_number "$out" "step ")
  r=$(restore_id "$ck")
  check "$name: restored" test -n "$r"
  check "$name: the ranks go on exchanging from step $n" wait_for 20 at_least "$out" "step " $((${n:-0} + 5))
  check "$name: the job ends by itself" wait_for 60 grep -q "final digest" "$out"
  check "$name: with the uninterrupted run's digest" grep -q "$expect" "$out"
  check "$name: its steps without a gap or repeat" sequence_ok "$out" "step "
}
ring_round mpich mpiexec.mpich -n 2 "$T/ring_mpich"
ring_round openmpi-sm "${OPENMPI[@]}" --mca btl vader,self "$T/ring_openmpi"
# An OpenMPI run of the same program just before leaves its TCP ports in TIME_WAIT, which a
# restore binding them again must get past (engine/time_wait.h).
check "OpenMPI's TCP transport: an uninterrupted run gives the same digest" \
  grep -q "$expect" <("${OPENMPI[@]}" --mca btl tcp,self "$T/ring_openmpi" "$STEPS")
ring_round openmpi-tcp "${OPENMPI[@]}" --mca btl tcp,self "$T/ring_openmpi"

# Two OpenMPI jobs at once: each workload's mpirun has the same pid in its own PID namespace,
# which OpenMPI names its session directory and shared-memory segments after; each workload
# gets a directory of its own for them (daemon/mpi_scratch.h). Both checkpointed, both restored.
for j in 1 2; do
  W[$j]=$("$CEDANA" run --label "twin-$j" --output "$T/twin-$j.out" -- "${OPENMPI[@]}" --mca btl vader,self \
    "$T/ring_openmpi" "$STEPS" 2>/dev/null)
done
check "two OpenMPI jobs run at once" wait_for 30 bash -c "grep -q '^step 10' '$T/twin-1.out' && grep -q '^step 10' '$T/twin-2.out'"
segments_in_own_dir() { ls "/dev/shm/cedana-mpi-$1"/vader_segment.* >/dev/null 2>&1; }
check "each keeps its shared-memory segments in its own directory" \
  bash -c "$(declare -f segments_in_own_dir); segments_in_own_dir ${W[1]} && segments_in_own_dir ${W[2]}"
# Nothing of theirs is left at a path the other's restore would make too: OpenMPI's posix
# shmem component left a deleted /dev/shm/open_mpi.0000 open in every process, whose CRIU ghost
# copy both restores made at /dev/shm/open_mpi.0000.cr.1.ghost (one failed, "File exists").
holds_no_shared_shm_file() { # WORKLOAD: no process of its tree holds a deleted /dev/shm file outside a cedana-mpi dir
  local root p tree held found=""
  root=$(wl_field "$1" pid)
  tree=$(pstree -p "${root:-none}" 2>/dev/null | grep -o '([0-9]*)' | tr -d '()')
  [ "$(wc -w <<<"$tree")" -ge 3 ] || { say "  the tree of $1 (pid ${root:-?}) is not there"; return 1; }
  for p in $tree; do
    held=$(ls -l "/proc/$p/fd" 2>/dev/null | grep ' /dev/shm/' | grep '(deleted)' | grep -v '/dev/shm/cedana-mpi-' |
      sed "s|.* -> |  pid $p holds |")
    [ -z "$held" ] || found+="$held"$'\n'
  done
  [ -z "$found" ] || { say "$(head -3 <<<"$found")"; return 1; }
}
for j in 1 2; do
  check "twin $j holds no deleted file in /dev/shm outside its own directory" holds_no_shared_shm_file "${W[$j]}"
done
for j in 1 2; do CK[$j]=$(dump_id "${W[$j]}"); done
check "both checkpointed" test -n "${CK[1]}" -a -n "${CK[2]}"
for j in 1 2; do R[$j]=$(restore_id "${CK[$j]}"); done
check "both restored" test -n "${R[1]}" -a -n "${R[2]}"
for j in 1 2; do
  check "twin $j: ends by itself with the uninterrupted run's digest" \
    wait_for 60 grep -q "$expect" "$T/twin-$j.out"
  check "twin $j: its steps without a gap or repeat" sequence_ok "$T/twin-$j.out" "step "
done
gone() { [ ! -e "/dev/shm/cedana-mpi-$1" ]; }
check "their directories go once the runs have ended by themselves" \
  wait_for 10 bash -c "$(declare -f gone); gone ${W[1]} && gone ${W[2]}"
say "TIME_WAIT sockets ended for restores: $(grep -c "TIME_WAIT sockets on its TCP ports" "$T/daemon.log")"
finish
