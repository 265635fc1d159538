#!/bin/bash
# srun steps and unusual outputs in CEDANA_ENABLE jobs, on a real SLURM cluster started here
# (tests/slurm/cluster.sh). Every kind of step a batch script launches (srun, srun -n2, steps in
# the background, exit codes, an MPI program with srun --mpi=pmi2, sbatch --wrap, salloc + srun,
# a non-root user's job) must behave
# exactly as in the same job without cedana: the same output, environment, cwd, limits and exit
# codes. Then jobs whose work runs in srun steps are preempted and resumed, their steps with
# them: the seeds' victim with its loop in srun, a 2-task step beside a 1-task step; a step of
# srun --mpi is refused. And the seeds' victim with its output sent to /dev/null.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
refuse_other_node_daemon
T=$(mktemp -d /var/tmp/cedana-steps.XXXXXX)
chmod 755 "$T"
DAEMON_PID=
ALICE=cedana-alice
id "$ALICE" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$ALICE"

use_node_config
cleanup() {
  end_node_suite "$ALICE"
  rm -rf "$T"
}
trap cleanup EXIT

cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
start_node_daemon "$T/daemon.out" || { say "cannot start the node daemon"; cat "$T/daemon.out" >&2; exit 1; }
install_cedana_slurm || { say "plugin install / slurm setup failed"; exit 1; }
cd "$T"
mpicc.mpich -O2 -o mpi_allreduce "$ROOT/tests/workloads/mpi_allreduce.c" || { say "mpicc failed (is mpich installed?)"; exit 1; }

# The steps every variant runs. What a step prints that differs between two jobs anyway (job
# and step ids, the proxy's own variables) is normalised, so the files compare line by line.
cat >steps.body <<'BODY'
srun bash -c 'echo step ok'
srun -n2 bash -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS"' | sort
srun -n1 --exact bash -c 'sleep 1; echo background one' >bg1.$TAG &
srun -n1 --exact bash -c 'sleep 1; echo background two' >bg2.$TAG &
wait
cat bg1.$TAG bg2.$TAG
srun bash -c 'exit 3'; echo "step exit code $?"
srun --mpi=pmi2 -n2 "$MPI_PROGRAM" | sort
srun -n1 bash -c 'echo "cwd $PWD"; echo "PATH=$PATH"; echo "HOME=$HOME USER=$USER"; ulimit -a; id -u; id -G; cat /proc/self/cgroup'
srun -n1 bash -c 'env | cut -d= -f1 | grep -v "^CEDANA_" | sort' | tr '\n' ' '; echo
BODY
# step_job NAME ENABLED: a batch script running the steps, with the seeds' two export lines
# when ENABLED is 1, and without them otherwise.
step_job() {
  { echo '#!/bin/bash'
    echo "#SBATCH -n2 -o $1.out -e $1.err"
    if [ "$2" = 1 ]; then
      echo '#SBATCH --export=CEDANA_ENABLE=1'
      echo "#SBATCH --export=CEDANA_CHECKPOINT=steps-$1"
    fi
    echo "TAG=$1 MPI_PROGRAM=$T/mpi_allreduce"
    cat steps.body
  } >"$1.sbatch"
}
normalise() { sed -E -e 's/[0-9]{2,}/N/g' "$1"; }
same_output() { # same_output PLAIN ENABLED: the two jobs' outputs agree line by line
  [ -s "$1" ] && [ -s "$2" ] && diff <(normalise "$1") <(normalise "$2") >&2
}
finished() { [ "$(job_state "$1")" = COMPLETED ] || [ "$(job_state "$1")" = FAILED ]; }

# --- srun in a batch script: as without cedana -------------------------------------------------
step_job plain 0; step_job enabled 1
plain=$(submit plain.sbatch); enabled=$(submit enabled.sbatch)
check "the job without cedana ends" wait_for 60 finished "$plain"
check "the enabled job ends" wait_for 60 finished "$enabled"
check "the enabled job ran under cedana" grep -q "started under cedana" enabled.err
check "srun runs its command in an enabled job" grep -qx "step ok" enabled.out
check "srun -n2 runs both tasks" bash -c "grep -qx 'task 0 of 2' enabled.out && grep -qx 'task 1 of 2' enabled.out"
check "two steps in the background, then wait" bash -c "grep -qx 'background one' enabled.out && grep -qx 'background two' enabled.out"
check "a step's exit code reaches the script" grep -qx "step exit code 3" enabled.out
check "srun --mpi=pmi2: an MPI program's two ranks reduce together" \
  bash -c "grep -qx 'rank 0 of 2 sum 1' enabled.out && grep -qx 'rank 1 of 2 sum 1' enabled.out"
check "no step failed to start in the enabled job" bash -c "! grep -E 'execve|No such file' enabled.err"
check "every step's output, cwd, PATH, HOME, limits, ids, cgroup and environment as without cedana" \
  same_output plain.out enabled.out

# --- sbatch --wrap with the export on the command line -----------------------------------------
w=$(submit --export=CEDANA_ENABLE=1 -o wrap.out -e wrap.err --wrap "srun bash -c 'echo wrapped \$HOME'")
check "sbatch --export=CEDANA_ENABLE=1 --wrap: the step runs" wait_for 60 grep -qx "wrapped $HOME" wrap.out
check "under cedana" wait_for 10 grep -q "started under cedana" wrap.err

# --- salloc + srun ------------------------------------------------------------------------------
# salloc has no --export; the variable comes from the environment, or from srun's --export.
out=$(CEDANA_ENABLE=1 timeout 60 salloc -n1 srun --export=CEDANA_ENABLE=1 bash -c 'echo "allocated step $HOME $CEDANA_ENABLE"' 2>&1)
check "CEDANA_ENABLE=1 salloc srun --export=CEDANA_ENABLE=1: the step runs with its environment" \
  grep -qx "allocated step $HOME 1" <<<"$out"
grep -qx "allocated step $HOME 1" <<<"$out" || say "salloc printed: $out"

# --- a non-root user's job ---------------------------------------------------------------------
mkdir -p alice && chown "$ALICE" alice
(cd alice && cp ../steps.body . && step_job alice-plain 0 && step_job alice-enabled 1 && chown "$ALICE" ./*)
ap=$(cd alice && runuser -u "$ALICE" -- sbatch --parsable alice-plain.sbatch)
ae=$(cd alice && runuser -u "$ALICE" -- sbatch --parsable alice-enabled.sbatch)
check "alice's job without cedana ends" wait_for 60 finished "$ap"
check "alice's enabled job ends" wait_for 60 finished "$ae"
check "alice's enabled job ran under cedana" grep -q "started under cedana" alice/alice-enabled.err
check "alice's steps as without cedana" same_output alice/alice-plain.out alice/alice-enabled.out
check "alice's steps ran as alice" grep -qx "$(id -u "$ALICE")" alice/alice-enabled.out

# --- steps checkpointed with their job: preempted, requeued, resumed ---------------------------
job_gone() { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }
all_at_least() { local n=$1 f; shift; for f in "$@"; do counter_at_least "$f" "$n" || return 1; done; }
# The seeds' victim with its loop moved into srun (its label changed: the last section of this
# suite runs the seeds' victim itself).
{ grep '^#' "$HERE/victim.sbatch" | sed 's/CEDANA_CHECKPOINT=victim/CEDANA_CHECKPOINT=srun-victim/'
  cat <<'BODY'
srun bash -c 'for i in $(seq 0 40); do echo "Counter: $i"; sleep 1; done'
echo "step exit code $?"
BODY
} >srun_victim.sbatch
v=$(submit -p debug -w compute-01 -o srunv.out -e srunv.err srun_victim.sbatch)
check "the victim whose loop runs in srun counts" wait_for 30 counter_at_least srunv.out 3
preempt_and_resume "$v" srunv.err "its steps with it"
n=$(last_counter srunv.out)
check "its step counts on after the restore" wait_for 30 counter_at_least srunv.out $((n + 3))
# Again: the restored step, its task attached to a new srun, goes into the next checkpoint.
preempt_and_resume "$v" srunv.err "its steps with it"
n=$(last_counter srunv.out)
check "its step counts on after the second restore" wait_for 30 counter_at_least srunv.out $((n + 3))
check "and ends, its exit status reaching the script" wait_for 60 grep -qx "step exit code 0" srunv.out
check "its step's output counts 0..40 once each, across both preemptions" counts_from_zero srunv.out
check "up to the end" grep -qx "Counter: 40" srunv.out
check "no task failure reached the job's output" bash -c "! grep -q 'error: .*task' srunv.err"

# The same as a non-root user: her task proxies open her restored keepers' pipes themselves.
cp srun_victim.sbatch alice/ && chown "$ALICE" alice/srun_victim.sbatch
a=$(cd alice && runuser -u "$ALICE" -- sbatch --parsable -p debug -w compute-01 -o srunv.out -e srunv.err srun_victim.sbatch)
check "alice's victim whose loop runs in srun counts" wait_for 30 counter_at_least alice/srunv.out 3
preempt_and_resume "$a" alice/srunv.err "its steps with it"
check "alice's step ends after the restore, its exit status reaching the script" \
  wait_for 60 grep -qx "step exit code 0" alice/srunv.out
check "alice's step output counts 0..40 once each, across the preemption" counts_from_zero alice/srunv.out
check "up to the end" grep -qx "Counter: 40" alice/srunv.out
check "nothing failed in alice's job" bash -c "! grep -qE 'cannot attach|srun: error|runs without' alice/srunv.err"

# A 2-task step and a 1-task step running at once.
cat >twosteps.sbatch <<'JOB'
#!/bin/bash
#SBATCH -n2 --export=CEDANA_ENABLE=1,CEDANA_CHECKPOINT=twosteps
srun -n2 --overlap bash -c 'for i in $(seq 0 40); do echo "Counter: $i" >>task$SLURM_PROCID.out; sleep 1; done' &
srun -n1 --overlap bash -c 'for i in $(seq 0 40); do echo "Counter: $i"; sleep 1; done; exit 7' >single.out &
wait %1; echo "two-task step exit code $?"
wait %2; echo "single step exit code $?"
JOB
rm -f task0.out task1.out single.out
v=$(submit -p debug -w compute-01 -o twosteps.out -e twosteps.err twosteps.sbatch)
check "a 2-task step and a 1-task step count at once" \
  wait_for 30 all_at_least 3 task0.out task1.out single.out
# Another user cannot put a process into root's job by naming one of its steps.
step=$(grep -o 'step st-[0-9a-f]*' "$T/daemon.log" | tail -1 | cut -d' ' -f2)
out=$(runuser -u "$ALICE" -- python3 - "$step" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/run/cedana/cedana.sock")
s.sendall((json.dumps({"v": 1, "op": "step_task", "step": sys.argv[1], "task": 0,
                       "argv": ["id"], "caller_fds": [-1, 1, 2, 2]}) + "\n").encode())
print(s.makefile().readline())
PY
)
say "alice's step_task for root's step $step: $out"
check "alice cannot start a task in root's step $step" \
  bash -c "grep -q 'belongs to root, not to $ALICE' <<<\"\$0\"" "$out"
out=$("$CEDANA" dump slurm "$v" 2>&1); rc=$?
check "a checkpoint of the job left running (as a policy's) takes its steps in" \
  bash -c "[ $rc = 0 ] && grep -q 'checkpoint' <<<\"\$0\"" "$out"
n=$(last_counter single.out)
check "and every task counts on through it" wait_for 10 all_at_least $((n + 2)) task0.out task1.out single.out
preempt_and_resume "$v" twosteps.err "its steps with it"
check "both steps end after the restore, with their exit codes" \
  wait_for 90 bash -c "grep -qx 'two-task step exit code 0' twosteps.out && grep -qx 'single step exit code 7' twosteps.out"
for f in task0.out task1.out single.out; do
  check "$f counts 0..40 once each, across the preemption" counts_from_zero "$f"
  check "$f up to the end" grep -qx "Counter: 40" "$f"
done

# srun --mpi: its ranks talk to slurmstepd, which no checkpoint includes: refused, saying so.
j=$(submit --export=CEDANA_ENABLE=1 -n2 -o mpistep.out -e mpistep.err --wrap "srun --mpi=pmi2 -n1 bash -c 'for i in \$(seq 0 300); do echo Counter: \$i; sleep 1; done'")
check "a job whose script waits in srun --mpi=pmi2 counts" wait_for 30 counter_at_least mpistep.out 3
out=$("$CEDANA" dump slurm "$j" 2>&1); rc=$?
say "cedana dump slurm of a job inside srun --mpi=pmi2: exit $rc: $out"
check "its checkpoint is refused, naming srun --mpi" bash -c "[ $rc != 0 ] && grep -q 'srun --mpi=pmi2: its ranks talk to slurmstepd' \"\$0\"" <(printf '%s' "$out")
n=$(last_counter mpistep.out)
check "and the job keeps running through the refused checkpoint" wait_for 10 counter_at_least mpistep.out $((n + 2))
scancel "$j"
wait_for 90 job_gone "$j" || say "job $j still holds the node"

# A step started before the node daemon restarted cannot be started again after a restore: the
# job's checkpoint is refused until it ends, saying so, and the job runs on.
j=$(submit --export=CEDANA_ENABLE=1 -o restarted.out -e restarted.err --wrap "srun bash -c 'for i in \$(seq 0 300); do echo Counter: \$i; sleep 1; done'")
check "a job whose step counts" wait_for 30 counter_at_least restarted.out 3
kill "$DAEMON_PID" && wait "$DAEMON_PID" 2>/dev/null
start_node_daemon "$T/daemon.out" || say "cannot start the node daemon again"
out=$("$CEDANA" dump slurm "$j" 2>&1); rc=$?
say "cedana dump slurm after the daemon restarted: exit $rc: $out"
check "after the node daemon restarted, its checkpoint is refused, saying why" \
  bash -c "[ $rc != 0 ] && grep -q 'a step of the job started before this node daemon did' \"\$0\"" <(printf '%s' "$out")
n=$(last_counter restarted.out)
check "and the job keeps running" wait_for 10 counter_at_least restarted.out $((n + 2))
scancel "$j"
# Its SIGTERM is answered by a refused checkpoint: SLURM kills it after KillWait. The node must
# be free for the victim below.
wait_for 90 job_gone "$j" || say "job $j still holds the node"

# --- another SLURM suite started now: stops at once, naming the daemon already on the socket ----
out=$(timeout 30 bash "$HERE/unprivileged_test.sh" 2>&1); rc=$?
check "a second SLURM suite refuses to start beside this suite's node daemon, saying so" \
  bash -c "[ $rc = 1 ] && grep -q 'another cedana node daemon already listens on' <<<'$out'"
check "and changed nothing (this suite's config is still in place)" grep -q "$T/checkpoints" "$CONFIG"

# --- the seeds' victim with its output sent to /dev/null: checkpointed and resumed -------------
v=$(submit -p debug -w compute-01 -o /dev/null -e devnull.err "$HERE/victim.sbatch")
check "victim with --output=/dev/null runs under cedana" wait_for 30 grep -q "started under cedana" devnull.err
check "and is not refused for its output" bash -c "! grep -q 'without checkpointing' devnull.err"
sleep 3
p=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null "$HERE/preemptor.sbatch")
check "checkpointed at preemption" wait_for 60 grep -q "taken on preemption" devnull.err
check "requeued" wait_job_state "$v" PENDING 120
scancel "$p"
release_requeue_hold "$v"
check "resumed from its checkpoint" wait_for 60 grep -q "resumed from checkpoint" devnull.err
check "its restored workload writes to /dev/null" \
  wait_for 10 bash -c "'$CEDANA' ps --json | grep -q '\"stdout_path\": \"/dev/null\"'"
scancel "$v"

say ""
say "steps_test.sh: $PASSED passed, $FAILED failed"
if [ "$FAILED" -gt 0 ]; then
  for f in enabled.err wrap.err srunv.err twosteps.err devnull.err; do [ -f "$f" ] && { say "--- $f ---"; tail -5 "$f" >&2; }; done
  say "--- daemon log ---"; tail -20 "$T/daemon.log" >&2
  exit 1
fi
