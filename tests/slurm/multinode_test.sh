#!/bin/bash
# A job over two nodes (tests/slurm/cluster.sh with CLUSTER_NODES=2: compute-02 in its own
# network namespace with its own node daemon, the checkpoint dir shared): `srun -N2 -n2` runs a
# task on each node, and the job's checkpoint takes both in as one (docs/architecture.md, "Steps
# over several nodes"). Checked: a checkpoint left running (as a policy's) names the other node's
# part and both tasks count on; preempted twice, the job resumes on two nodes, each task's
# counter continuous and the step's exit status reaching the script; the same as a non-root
# user; scancel, then the job resubmitted resumes from that checkpoint (a new job id: its srun
# must find this run's allocation); a part the other node refuses fails the whole checkpoint and
# both tasks run on; the batch node failing after the other node stored its part drops that part
# and continues it; and a user's munge credential is refused at the node daemons' peer port.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export CLUSTER_NODES=2
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
refuse_other_node_daemon
T=$(mktemp -d /var/tmp/cedana-multinode.XXXXXX)
chmod 755 "$T"
DAEMON_PID=
LISTENER_PID=
ALICE=cedana-alice
id "$ALICE" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$ALICE"

use_node_config
cleanup() {
  [ -n "$LISTENER_PID" ] && kill "$LISTENER_PID" 2>/dev/null
  end_node_suite "$ALICE"
  rm -rf "$T"
}
trap cleanup EXIT

# start_daemons [VAR=VALUE...]: the node daemon of compute-01 (with the variables given) and,
# once, compute-02's own, its config a copy of compute-01's with its own state, work dir, log
# and node name (the same checkpoint dir and cluster key: shared storage).
start_daemons() {
  start_node_daemon "$T/daemon.out" "$@" || { say "cannot start the node daemon"; cat "$T/daemon.out" >&2; exit 1; }
}
cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
start_daemons
install_cedana_slurm || { say "plugin install / slurm setup failed"; exit 1; }
sed -e "s|\"state_dir\": \"$T/state\"|\"state_dir\": \"$CLUSTER_NODE_B_DIR/state\"|" \
    -e "s|\"log_file\": \"$T/daemon.log\"|\"log_file\": \"$T/daemon-b.log\", \"node_name\": \"$CLUSTER_NODE_B\"|" \
    -e "s|\"work_dir\": \"$T/work\"|\"work_dir\": \"$T/work-b\"|" "$CONFIG" >"$T/config-b.json"
cluster_start_node_b "$T/config-b.json" || { say "cannot start compute-02"; exit 1; }
cd "$T"
mkdir -p alice && chown "$ALICE" alice

# two_node_job FILE LABEL [LINE]: a batch script whose step runs one task on each node; each task
# counts into task<rank>.out and says where it runs into the job's output, then exits with
# 3 + its rank (srun gives the script the highest: 4). LINE goes first in each task.
two_node_job() {
  cat >"$1" <<JOB
#!/bin/bash
#SBATCH -N2 -n2 --export=CEDANA_ENABLE=1,CEDANA_CHECKPOINT=$2
srun -N2 -n2 bash -c '${3:-}for i in \$(seq 0 60); do echo "Counter: \$i" >>task\$SLURM_PROCID.out; echo "rank \$SLURM_PROCID on \$SLURMD_NODENAME: \$i"; sleep 1; done; exit \$((SLURM_PROCID + 3))'
echo "step exit code \$?"
JOB
}
both_at_least() { counter_at_least "$1/task0.out" "$2" && counter_at_least "$1/task1.out" "$2"; }
# both_count_to_the_end DIR WHAT: each task's file in DIR holds 0..60 once each, across WHAT.
both_count_to_the_end() {
  local f
  for f in "$1/task0.out" "$1/task1.out"; do
    check "$f counts 0..60 once each, across $2" counts_from_zero "$f"
    check "$f up to the end" grep -qx "Counter: 60" "$f"
  done
}
parts_of() { ls -d "$T/checkpoints/$1/$2".st-*.r1/2* 2>/dev/null; }  # OWNER LABEL: part dirs
committed_parts() { local d n=0; for d in $(parts_of "$1" "$2"); do [ -f "$d/manifest.json" ] && n=$((n + 1)); done; echo $n; }
part_node() { # the node of the part the newest checkpoint of root's label $1 names
  python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))
print(m["workload"]["steps"][0]["parts"][0]["node"])' "$(ls -d "$T/checkpoints/root/$1"/2*/manifest.json | tail -1)"
}
export T
export -f parts_of committed_parts part_node

# --- root's job: left running, then preempted twice --------------------------------------------
two_node_job twonodes.sbatch twonodes
v=$(submit -p debug -o twonodes.out -e twonodes.err twonodes.sbatch)
check "a job over two nodes runs a task on each" wait_for 40 both_at_least . 3
check "its task 1 runs on compute-02" wait_for 10 grep -q "rank 1 on compute-02" twonodes.out
out=$("$CEDANA" dump slurm "$v" 2>&1); rc=$?
say "cedana dump slurm $v: $out"
check "a checkpoint left running (as a policy's) takes both nodes' tasks in" \
  bash -c "[ $rc = 0 ] && [ \"\$(committed_parts root twonodes)\" = 1 ]"
check "its manifest names the part on compute-02" bash -c "[ \"\$(part_node twonodes)\" = compute-02 ]"
n=$(last_counter task1.out)
check "both tasks count on through it" wait_for 10 both_at_least . $((n + 2))
preempt_and_resume "$v" twonodes.err "on both nodes"
n=$(last_counter task1.out)
check "both tasks count on after the restore" wait_for 30 both_at_least . $((n + 3))
check "task 1 resumed on compute-02 again" bash -c "grep -q 'restored as workload' daemon-b.log"
preempt_and_resume "$v" twonodes.err "on both nodes"
n=$(last_counter task1.out)
check "both tasks count on after the second restore" wait_for 30 both_at_least . $((n + 3))
check "the step ends, its exit status reaching the script" \
  wait_for 90 grep -qx "step exit code 4" twonodes.out
both_count_to_the_end . "both preemptions"
check "no task failed or ran without its checkpoint" \
  bash -c "! grep -qE 'cannot resume|runs without|did not report' twonodes.err"

# --- the same as a non-root user --------------------------------------------------------------
two_node_job alice/twonodes.sbatch alice-twonodes
chown "$ALICE" alice/twonodes.sbatch
a=$(cd alice && runuser -u "$ALICE" -- sbatch --parsable -p debug -o twonodes.out -e twonodes.err twonodes.sbatch)
check "alice's job over two nodes runs a task on each" wait_for 40 both_at_least alice 3
preempt_and_resume "$a" alice/twonodes.err "on both nodes"
check "alice's step ends after the restore, its exit status reaching the script" \
  wait_for 90 grep -qx "step exit code 4" alice/twonodes.out
both_count_to_the_end alice "the preemption"
check "alice's parts are hers" bash -c "[ \"\$(committed_parts $ALICE alice-twonodes)\" -ge 1 ]"
check "nothing failed in alice's job" bash -c "! grep -qE 'cannot resume|runs without|did not report' alice/twonodes.err"

# --- scancel: checkpointed on both nodes; the job resubmitted resumes from it ---------------------
mkdir -p cancelled
two_node_job cancelled/cancelled.sbatch cancelled
c=$(cd cancelled && submit -p debug -o cancelled.out -e cancelled.err cancelled.sbatch)
check "a job over two nodes counts before its scancel" wait_for 40 both_at_least cancelled 3
scancel "$c"
check "scancel: its checkpoint is taken on both nodes" wait_for 60 grep -q "taken on SIGTERM" cancelled/cancelled.err
check "the cancelled job ends" wait_for 90 bash -c "[ -z \"\$(squeue -h -j $c 2>/dev/null)\" ]"
check "its checkpoint names the part on compute-02" bash -c "[ \"\$(part_node cancelled)\" = compute-02 ]"
c=$(cd cancelled && submit -p debug -o cancelled.out -e cancelled.err cancelled.sbatch)
check "resubmitted, it resumes from that checkpoint" wait_for 60 grep -q "resumed from checkpoint" cancelled/cancelled.err
check "its step ends, its exit status reaching the script" \
  wait_for 90 grep -qx "step exit code 4" cancelled/cancelled.out
both_count_to_the_end cancelled "the scancel"

# --- a user cannot ask the node daemons' peer port ---------------------------------------------
out=$(runuser -u "$ALICE" -- munge -s '{"job_id":"1","round":"x"}' |
  curl -s --data-binary @- http://10.77.0.2:6830/dump_parts | unmunge 2>&1)
say "alice at compute-02's peer port: $out"
check "a user's munge credential is refused at the peer port" \
  grep -q "only a node daemon (root) may ask" <<<"$out"

# --- compute-02 refuses its part: the whole checkpoint fails, both tasks run on -----------------
# Task 1 holds a TCP connection to a listener outside the job, which a checkpoint refuses
# (checkpoint.tcp defaults to refuse).
python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.77.0.1", 7101)); s.listen(8); held = []
while True: held.append(s.accept()[0])' &
LISTENER_PID=$!
rm -f refused/task0.out refused/task1.out; mkdir -p refused
two_node_job refused/refused.sbatch refused '[ $SLURM_PROCID = 1 ] && exec 3<>/dev/tcp/10.77.0.1/7101; '
r=$(cd refused && submit -p debug -o refused.out -e refused.err refused.sbatch)
check "a job whose task on compute-02 holds a connection outside runs" wait_for 40 both_at_least refused 3
out=$("$CEDANA" dump slurm "$r" 2>&1); rc=$?
say "cedana dump slurm $r: $out"
check "its checkpoint fails, naming compute-02 and the connection" \
  bash -c "[ $rc != 0 ] && grep -q 'compute-02' <<<\"\$0\" && grep -qi 'tcp' <<<\"\$0\"" "$out"
check "nothing of it is committed" bash -c "[ -z \"\$(ls -d $T/checkpoints/root/refused/2* 2>/dev/null)\" ]"
check "and no part of it stays stored on compute-02" bash -c "[ -z \"\$(parts_of root refused)\" ]"
n=$(last_counter refused/task1.out)
check "both tasks count on" wait_for 10 both_at_least refused $((n + 2))
scancel "$r"

# --- the batch node fails after compute-02 stored its part ------------------------------------
# compute-01's daemon, restarted with a fault after CRIU's dump, fails every dump there: the part
# compute-02 stored is deleted and its task continued. (Last: the restarted daemon does not
# know the steps of jobs started before it.)
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null
start_daemons CEDANA_TEST_PAUSE_AT=dump:dumped:1
rm -rf late; mkdir -p late
two_node_job late/late.sbatch late
l=$(cd late && submit -p debug -o late.out -e late.err late.sbatch)
check "a job over two nodes runs under the failing daemon" wait_for 40 both_at_least late 3
out=$("$CEDANA" dump slurm "$l" 2>&1); rc=$?
say "cedana dump slurm $l: $out"
check "its checkpoint fails on compute-01" bash -c "[ $rc != 0 ]"
check "compute-02 dropped the part it had stored" \
  wait_for 10 bash -c "[ -z \"\$(parts_of root late)\" ] && grep -q 'was not committed' $T/daemon-b.log"
n=$(last_counter late/task1.out)
check "both tasks count on" wait_for 10 both_at_least late $((n + 2))

if [ "$FAILED" -gt 0 ]; then
  for f in twonodes.err alice/twonodes.err cancelled/cancelled.err refused/refused.err late/late.err; do [ -f "$f" ] && { say "--- $f ---"; tail -5 "$f" >&2; }; done
  say "--- daemon logs ---"; tail -15 "$T/daemon.log" >&2; tail -15 "$T/daemon-b.log" >&2
  exit 1
fi
