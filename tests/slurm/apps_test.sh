#!/bin/bash
# Real applications as SLURM jobs, on a real cluster started here (tests/slurm/cluster.sh), with
# the seeds' flow: every job is submitted to `debug`, a job on `high` taking every CPU preempts
# them all at once, they are requeued and resume from their checkpoints. Each result is compared
# with an uninterrupted run of the same input outside SLURM (every program here is
# deterministic, so they must be identical). The node declares 16 CPUs, so that all the jobs run
# at once on this small machine and one preemption checkpoints them together.
#   GROMACS (Debian's): serial `gmx mdrun`, and 2 OpenMPI ranks of gmx_mpi
#   a 2-rank MPI ring exchanging every step: OpenMPI shared memory, OpenMPI TCP, MPICH
#   a multi-threaded (OpenMP) job
#   a Python job talking over TCP to a server in the same job
#   a job connected to a server outside the job, under each checkpoint.tcp setting
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
WORKLOADS=$ROOT/tests/workloads
refuse_other_node_daemon
export CLUSTER_CPUS=16
T=$(mktemp -d /var/tmp/cedana-apps.XXXXXX)
chmod 755 "$T"
DAEMON_PID=
SERVER_PID=

use_node_config
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
  end_node_suite
  rm -rf "$T"
}
trap cleanup EXIT
cd "$T"

# --- the programs, their inputs, and their uninterrupted results -------------------------------
GMX_STEPS=6000 RING_STEPS=200 OMP_STEPS=200 TICKS=200
mpicc.openmpi -O2 -o ring_openmpi "$WORKLOADS/mpi_ring.c" &&
  mpicc.mpich -O2 -o ring_mpich "$WORKLOADS/mpi_ring.c" &&
  gcc -O2 -fopenmp -o omp_digest "$WORKLOADS/omp_digest.c" ||
  { say "cannot build the test programs (are libopenmpi-dev and libmpich-dev installed?)"; exit 1; }
# A box of 510 water molecules, GMX_STEPS steps of 2 fs with PME, seeded: -reprod makes a run
# repeatable bit for bit.
gmx -quiet solvate -cs spc216.gro -box 2.5 2.5 2.5 -o water.gro >gmx-prep.log 2>&1
cat >topol.top <<TOP
#include "oplsaa.ff/forcefield.itp"
#include "oplsaa.ff/spce.itp"
[ system ]
water
[ molecules ]
SOL $(grep -c OW water.gro)
TOP
cat >md.mdp <<MDP
integrator = md
dt = 0.002
nsteps = $GMX_STEPS
nstlog = 500
nstenergy = 500
cutoff-scheme = Verlet
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
tcoupl = V-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
constraints = h-bonds
gen-vel = yes
gen-seed = 42
ld-seed = 42
MDP
gmx -quiet grompp -f md.mdp -c water.gro -p topol.top -o md.tpr >>gmx-prep.log 2>&1 ||
  { say "cannot prepare the GROMACS input (is gromacs installed?)"; tail -5 gmx-prep.log >&2; exit 1; }
# OpenMPI's mpirun starts the ranks itself on a node of its SLURM allocation whose SLURM name is
# the host's name; here the node is compute-01 on a host of another name, so mpirun would start
# its daemon there with srun (a step, outside the checkpointed tree): it is told to use this
# host only (ras ^slurm), as it does on a real cluster's node.
OPENMPI=(mpirun.openmpi --allow-run-as-root --mca ras ^slurm -np 2)
GMX_SERIAL=(gmx -quiet mdrun -s md.tpr -ntmpi 1 -ntomp 1 -reprod)
GMX_MPI=("${OPENMPI[@]}" gmx_mpi -quiet mdrun -s md.tpr -ntomp 1 -reprod)
say "uninterrupted runs..."
"${GMX_SERIAL[@]}" -deffnm ref-serial >/dev/null 2>&1 &
mpiexec.mpich -n 2 ./ring_mpich "$RING_STEPS" >ref-ring.out 2>&1 &
OMP_NUM_THREADS=2 ./omp_digest "$OMP_STEPS" >ref-omp.out 2>&1 &
wait
"${GMX_MPI[@]}" -deffnm ref-mpi >/dev/null 2>&1
ring_digest=$(grep -o 'final digest [0-9a-f]*' ref-ring.out)
omp_digest=$(grep -o 'final digest [0-9a-f]*' ref-omp.out)
check "uninterrupted: GROMACS serial and 2-rank results, the ring's ($ring_digest) and OpenMP's ($omp_digest) digests" \
  test -s ref-serial.gro -a -s ref-mpi.gro -a -n "$ring_digest" -a -n "$omp_digest"

# A server outside every job: echoes each line it gets.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$WORKLOADS/echo_server.py" "$PORT" &
SERVER_PID=$!

# --- the cluster, cedana on it, and the jobs ------------------------------------------------
cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
start_node_daemon "$T/daemon.out" || { say "cannot start the node daemon"; cat "$T/daemon.out" >&2; exit 1; }
install_cedana_slurm || { say "plugin install / slurm setup failed"; exit 1; }

# app NAME TASKS EXPORTS COMMAND...: a batch script NAME.sbatch enabling cedana (with EXPORTS
# added to its --export line) that runs COMMAND in $T; submitted, its job id in JOBS[NAME].
declare -A JOBS
app() {
  local name=$1 tasks=$2 exports=$3; shift 3
  { echo '#!/bin/bash'
    echo "#SBATCH -J $name -o $name.out -e $name.err -n $tasks"
    echo "#SBATCH --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=apps-$name$exports"
    echo "cd $T"
    printf '%q ' "$@"; echo
  } >"$name.sbatch"
  JOBS[$name]=$(submit -p debug "$name.sbatch")
}
# Inside a SLURM job MPICH's mpiexec would start its proxy with srun (docs/workloads.md). It
# starts first: UCX's endpoints can time out in MPI_Init when ten busy jobs share two cores.
app ring-mpich 2 "" mpiexec.mpich -launcher fork -n 2 ./ring_mpich "$RING_STEPS"
wait_for 60 grep -q '^step 1$' ring-mpich.out
app gmx-serial 1 "" "${GMX_SERIAL[@]}" -deffnm gmx-serial
app gmx-mpi 2 "" "${GMX_MPI[@]}" -deffnm gmx-mpi
app ring-openmpi 2 "" "${OPENMPI[@]}" --mca btl vader,self ./ring_openmpi "$RING_STEPS"
app ring-openmpi-tcp 2 "" "${OPENMPI[@]}" --mca btl tcp,self ./ring_openmpi "$RING_STEPS"
app omp 2 ",OMP_NUM_THREADS=2" ./omp_digest "$OMP_STEPS"
app tcp-pair 1 "" python3 "$WORKLOADS/tcp_pair.py" "$TICKS"
for setting in refuse close established; do
  # The refused one counts longer than the grace time: SLURM ends it, and it starts again.
  ticks=$TICKS; [ $setting = refuse ] && ticks=$((TICKS * 2))
  app "tcp-$setting" 1 ",CEDANA_CHECKPOINT_TCP=$setting" python3 "$WORKLOADS/tcp_client.py" "$PORT" "$ticks"
done

gmx_logged_step_at_least() { # gmx_logged_step_at_least NAME STEP: NAME.log has an energy block at STEP or later
  awk -v want="$2" 'prev ~ /^ +Step +Time/ && $1 >= want {found=1} {prev=$0} END {exit !found}' "$1.log" 2>/dev/null
}
progress() { # progress NAME: the job has done some of its work
  case $1 in
    gmx-*) gmx_logged_step_at_least "$1" 500 ;;
    tcp-*) grep -q '^tick 10$' "$1.out" 2>/dev/null ;;
    *) grep -q '^step 10$' "$1.out" 2>/dev/null ;;
  esac
}
ended() { case "$(job_state "$1")" in COMPLETED | FAILED | CANCELLED | TIMEOUT | "") return 0 ;; esac; return 1; }  # "": purged
# Every job has made progress, or ended (a failure, reported below): the preemption comes then.
all_progressed_or_ended() { local n; for n in "${!JOBS[@]}"; do progress "$n" || ended "${JOBS[$n]}" || return 1; done; }
wait_for 180 all_progressed_or_ended
for n in "${!JOBS[@]}"; do
  check "$n: runs and makes progress" progress "$n"
  progress "$n" || { say "  $n ($(job_state "${JOBS[$n]}")), its stderr:"; tail -15 "$n.err" >&2; }
done

# --- one preemption for all of them -------------------------------------------------------------
preemptor=$(submit -p high -n "$CLUSTER_CPUS" -o preemptor.out "$HERE/preemptor.sbatch")
refusal="^cedana: checkpoint refused: .*TCP connection to 127.0.0.1:$PORT (from 127.0.0.1:[0-9]*) is outside the job"
check "tcp-refuse: its stderr says in one line that its checkpoint was refused, naming the peer" \
  wait_for 30 grep -q "$refusal" tcp-refuse.err
check "tcp-refuse: the node daemon records the refusal for the jobs list" \
  bash -c "grep -lq 'checkpoint on preemption refused: .*TCP connection to 127.0.0.1:$PORT .*is outside the job' '$T'/state/workloads/*/notice.json"
check "tcp-refuse: and it runs on until SLURM ends it" wait_for 10 grep -qx "tick $((TICKS / 2))" tcp-refuse.out
all_requeued() { local n; for n in "${!JOBS[@]}"; do [ "$(job_state "${JOBS[$n]}")" = PENDING ] || return 1; done; }
check "every job is requeued" wait_for 120 all_requeued
check "the preemptor runs" wait_job_state "$preemptor" RUNNING 60
scancel "$preemptor"
for n in "${!JOBS[@]}"; do [ "$(job_state "${JOBS[$n]}")" = PENDING ] && release_requeue_hold "${JOBS[$n]}"; done
all_finished() { local n; for n in "${!JOBS[@]}"; do ended "${JOBS[$n]}" || return 1; done; }
check "every job ends" wait_for 300 all_finished

# --- each one resumed, with the uninterrupted run's result -------------------------------------
for n in "${!JOBS[@]}"; do
  [ "$n" = tcp-refuse ] && continue
  check "$n: checkpointed at the preemption" grep -q "dump: checkpoint .*(label apps-$n," "$T/daemon.log"
  check "$n: resumed from its checkpoint after the requeue" grep -q "resumed from checkpoint" "$n.err"
  check "$n: completed" test "$(job_state "${JOBS[$n]}")" = COMPLETED
done
for n in gmx-serial gmx-mpi; do
  check "$n: one mdrun, not started again" test "$(grep -c 'Started mdrun' "$n.log")" = 1
  check "$n: its last step logged" gmx_logged_step_at_least "$n" "$GMX_STEPS"
done
check "gmx-serial: final coordinates identical to the uninterrupted run's" cmp gmx-serial.gro ref-serial.gro
check "gmx-mpi: final coordinates identical to the uninterrupted run's" cmp gmx-mpi.gro ref-mpi.gro
for n in ring-openmpi ring-openmpi-tcp ring-mpich; do
  check "$n: the uninterrupted run's digest" grep -q "$ring_digest" "$n.out"
done
check "omp: the uninterrupted run's digest" grep -q "$omp_digest" omp.out
ticks_to_the_end() { # ticks_to_the_end FILE: "tick N" lines consecutive up to the last, then "done"
  python3 - "$1" "$TICKS" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
t = [int(m) for m in re.findall(r"^tick (\d+)$", text, re.M)]
ok = bool(t) and t == list(range(t[0], t[0] + len(t))) and t[-1] == int(sys.argv[2]) - 1
ok = ok and text.rstrip().endswith("done")
if not ok: print(f"{sys.argv[1]}: ticks {t[:5]} ... {t[-5:]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
check "tcp-pair: its connection inside the job carried on to the end" ticks_to_the_end tcp-pair.out
check "tcp-established: restored connected to the server outside, to the end" ticks_to_the_end tcp-established.out
check "tcp-established: without a reset" bash -c "test -s tcp-established.out && ! grep -q '^lost' tcp-established.out"
check "tcp-close: restored closed: the client saw the reset, reconnected and ended" \
  bash -c "grep -q '^lost' tcp-close.out && grep -qx reconnected tcp-close.out && grep -qx done tcp-close.out"
check "tcp-refuse: after the requeue it started fresh and ended" \
  bash -c "grep -qx 'tick 0' tcp-refuse.out && grep -qx done tcp-refuse.out && ! grep -q 'resumed from checkpoint' tcp-refuse.err"
for n in "${!JOBS[@]}"; do
  restarts=$(scontrol show job "${JOBS[$n]}" | grep -o 'Restarts=[0-9]*')
  check "$n: SLURM counted one restart ($restarts)" test "$restarts" = Restarts=1
done
grep -h "dump: checkpoint" "$T/daemon.log" | sed 's/.*(label /  (label /' >&2
[ "$FAILED" -gt 0 ] && { say "--- daemon log: warnings and errors ---"; grep -E '^[0-9T:.-]+Z (warn|error) ' "$T/daemon.log" | tail -20 >&2; }
exit $((FAILED > 0))
