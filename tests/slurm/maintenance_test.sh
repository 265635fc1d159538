#!/bin/bash
# Maintenance windows on a real two-node SLURM cluster (tests/slurm/cluster.sh, CLUSTER_NODES=2:
# compute-02 runs in its own network and mount namespaces, with its own node daemon; the
# checkpoint dir is shared). A MAINT reservation on compute-01 makes the controller requeue the
# CEDANA_ENABLE jobs running there before the window starts; each is checkpointed as SLURM ends
# it and resumes on compute-02 from that checkpoint, or waits while compute-02 is busy.
# When the checkpoint fails, the job is requeued all the same and resumes from an older one.
# Also: a reservation without MaxStartDelay is flagged; one deleted before its lead time moves
# nothing; the web UI's Maintenance page shows the window and the move (headless Chromium).
export CLUSTER_NODES=2
source "$(cd "$(dirname "$0")" && pwd)/controller_env.sh"
MEMSTATE=${MEMSTATE:-$ROOT/build/tests/memstate}
cp "$HERE/victim.sbatch" "$HERE/memjob.sbatch" .

node_of() { squeue -h -j "$1" -o %N; }
state_of() { squeue -h -j "$1" -o %T; }
is_state() { [ "$(state_of "$1")" = "$2" ]; }
restarts_of() { scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2; }
requeued_since() { local n; n=$(restarts_of "$1"); [ -n "$n" ] && [ "$n" -gt "$2" ]; }
window_field() { api GET /maintenance | jq_py "next((str($2) for w in d if w['name'] == '$1'), '')"; }
window_is() { [ "$(window_field "$1" "w['status']")" = "$2" ]; }
moved() { [ "$(window_field "$1" "[m['action'] for m in w['moves'] if m['job_id'] == $2]")" = "['requeued']" ]; }
warns() { api GET /maintenance | grep -q "$1"; }
quiet() { ! warns "$1"; }
enabled() { api GET "/jobs/$1" | jq_py "d['state'] == 'RUNNING' and d['enabled']" | grep -q True; }
# A job that keeps compute-02 busy (all its CPUs), so that the next job lands on compute-01.
block_b() { submit -w "$CLUSTER_NODE_B" --cpus-per-task="$(nproc)" -o /dev/null --wrap "sleep 600"; }
reserve() { # NAME START-IN-SECONDS DURATION-MINUTES [more scontrol args]
  local name=$1 start=$2 minutes=$3; shift 3
  scontrol create reservation ReservationName="$name" starttime="now+$start" duration="$minutes" \
    flags=maint,ignore_jobs nodes="$CLUSTER_NODE" user=root "$@" >/dev/null
}

check "compute-02 is up in its own namespaces" bash -c "sinfo -h -n $CLUSTER_NODE_B -o %t | grep -qE 'idle|mix'"

# 1. A job with a few hundred MiB of state in two processes moves to compute-02 and finishes
#    with the result of an uninterrupted run.
expect=$("$MEMSTATE" 150 /dev/null 0 2>/dev/null | grep -o 'checksum [0-9a-f]*')
export MEMSTATE FLAG=$T/mem.flag
blocker=$(block_b)
wait_for 30 is_state "$blocker" RUNNING
mem=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=maint-mem memjob.sbatch)
check "the memory job runs on compute-01" wait_for 30 bash -c "[ \"\$(squeue -h -j $mem -o %N)\" = $CLUSTER_NODE ]"
scancel "$blocker"
check "the memory job is ready" wait_for 120 bash -c "[ \$(grep -c ready memjob.out) -ge 2 ]"
check "the controller sees it as managed" wait_for 20 enabled "$mem"

# A far window without MaxStartDelay, deleted before its lead time: flagged, then cancelled,
# and no job moves.
reserve later_window 3600 60
check "a far window is tracked as scheduled" wait_for 20 window_is later_window scheduled
check "and flagged for its missing MaxStartDelay" warns "later_window has no MaxStartDelay"
# Without JobRequeue SLURM cannot requeue jobs: the windows say so while it lasts.
sed -i 's/^JobRequeue=1$/JobRequeue=0/' "$CLUSTER_CONF" && scontrol reconfigure
check "JobRequeue=0 is flagged" wait_for 20 warns "JobRequeue=0"
sed -i 's/^JobRequeue=0$/JobRequeue=1/' "$CLUSTER_CONF" && scontrol reconfigure
check "and no longer once it is back" wait_for 20 quiet "JobRequeue=0"
scontrol delete ReservationName=later_window
check "deleted before it starts: cancelled" wait_for 20 window_is later_window cancelled
check "and it moved no job" test "$(window_field later_window "len(w['moves'])")" = 0
check "the memory job still runs on compute-01" is_state "$mem" RUNNING

# The seeds' reservation on compute-01, starting within the controller's lead time (60 s).
reserve maint_window 30 2 MaxStartDelay=5
check "the window is scheduled" wait_for 20 window_is maint_window scheduled
check "the controller requeued the job for the window" wait_for 30 moved maint_window "$mem"
check "the job was checkpointed as SLURM ended it" wait_for 60 grep -q "taken on SIGTERM" memjob.err
check "the job is pending again (requeued)" wait_for 30 is_state "$mem" PENDING
check "the window becomes active" wait_for 60 window_is maint_window active
release_requeue_hold "$mem"
check "the job runs again, on compute-02" \
  wait_for 60 bash -c "[ \"\$(squeue -h -j $mem -o %T:%N)\" = RUNNING:$CLUSTER_NODE_B ]"
check "restored from its maintenance checkpoint on compute-02" \
  wait_for 60 resumed memjob.err $mem 1

if [ -x /usr/bin/chromium ] && [ -d "$ROOT/tests/ui/node_modules/playwright-core" ]; then
  mkdir -p "$UI_SCREENSHOTS/maintenance"
  UI_SCENARIO=maintenance MAINT_WINDOW=maint_window MAINT_STATUS=active MAINT_JOB=$mem \
    CONTROLLER_URL=$URL ADMIN_TOKEN=$ADMIN SCREENSHOT_DIR=$UI_SCREENSHOTS/maintenance \
    node "$ROOT/tests/ui/ui_test.mjs" >"$T/ui.out" 2>&1
  ui=$?
  grep -E '^(PASS|FAIL)' "$T/ui.out" | sed 's/^/  ui: /' >&2
  check "the web UI shows the window and the moved job (headless Chromium)" test $ui = 0
else
  fail "web UI test: needs /usr/bin/chromium and tests/ui/node_modules (scripts/setup.sh installs both)"
fi

touch "$FLAG"
check "the moved job finishes" wait_job_state "$mem" COMPLETED 120
check "both processes kept their state (PASS, no FAIL)" \
  bash -c "grep -q 'main: PASS' memjob.out && ! grep -q FAIL memjob.out"
check "each child's checksum equals an uninterrupted run's ($expect)" \
  test "$(grep -c "child0: PASS $expect" memjob.out)" = 1
check "the controller logged the move" grep -q "maintenance: window maint_window: job $mem" "$T/controller.log"
scontrol delete ReservationName=maint_window
check "the window deleted before its end is cancelled" wait_for 20 window_is maint_window cancelled

# 2. compute-02 busy: the requeued job waits, and resumes on compute-02 once it is free.
blocker=$(block_b)
wait_for 30 is_state "$blocker" RUNNING
job=$(submit victim.sbatch)
check "the counter job runs on compute-01" wait_for 30 bash -c "[ \"\$(squeue -h -j $job -o %N)\" = $CLUSTER_NODE ]"
check "and counts" wait_for 30 counter_at_least victim.out 3
wait_for 20 enabled "$job"
reserve maint_busy 30 2 MaxStartDelay=5
check "requeued for the second window" wait_for 30 moved maint_busy "$job"
check "checkpointed as SLURM ended it" wait_for 40 grep -q "taken on SIGTERM" victim.err
at=$(last_counter victim.out)
check "the second window becomes active" wait_for 60 window_is maint_busy active
release_requeue_hold "$job"
sleep 5
check "the job waits: compute-01 is reserved, compute-02 busy" is_state "$job" PENDING
scancel "$blocker"
check "once compute-02 is free the job runs there" \
  wait_for 60 bash -c "[ \"\$(squeue -h -j $job -o %T:%N)\" = RUNNING:$CLUSTER_NODE_B ]"
check "resumed from its checkpoint" wait_for 40 resumed victim.err $job 1
check "its counter goes on from $at" wait_for 20 counter_at_least victim.out $((at + 2))
# The output is kept across the requeue (append mode): one count from 0, never restarted.
check "never restarted from 0: victim.out counts from 0 on, each counter once (checkpoint at $at)" \
  counts_from_zero victim.out
check "and the script started once" test "$(count_of victim.out 'Starting victim')" = 1
check "the move's checkpoint is recorded as a requeue" \
  bash -c "\"$CEDANA\" checkpoints --label victim --json | python3 -c \"import json, sys; sys.exit(json.load(sys.stdin)[0]['reason'] != 'requeue')\""
scancel "$job"
check "scancel checkpoints it" wait_for 40 bash -c "[ \$(grep -c 'taken on SIGTERM' victim.err) = 2 ]"
older=$(grep -o 'checkpoint [0-9a-f-]* of label [^ ]* taken on SIGTERM' victim.err | tail -n1 | awk '{print $2}')
scontrol delete ReservationName=maint_busy

# 3. The checkpoint storage refuses the maintenance checkpoint (the label's dir made immutable):
#    the job is requeued all the same and resumes from the older checkpoint, never lost.
blocker=$(block_b)
wait_for 30 is_state "$blocker" RUNNING
job=$(submit victim.sbatch)
check "resubmitted, the counter job resumes from the scancel checkpoint" \
  wait_for 40 resumed victim.err $job 0 $older
wait_for 20 enabled "$job"
scancel "$blocker"
chattr +i "$T/checkpoints/root/victim"
restarts_before=$(restarts_of "$job")
reserve maint_fail 30 2 MaxStartDelay=5
check "requeued for the third window" wait_for 30 moved maint_fail "$job"
check "its checkpoint failed (storage refused it)" wait_for 60 grep -q "checkpoint on SIGTERM failed" victim.err
# SLURM's restart count, not a PENDING state that may last less than a poll (compute-02 is free).
check "the job is requeued anyway" wait_for 60 requeued_since "$job" "$restarts_before"
chattr -i "$T/checkpoints/root/victim"
wait_for 60 window_is maint_fail active
release_requeue_hold "$job"
check "it runs again on compute-02" \
  wait_for 60 bash -c "[ \"\$(squeue -h -j $job -o %T:%N)\" = RUNNING:$CLUSTER_NODE_B ]"
check "from the older checkpoint" wait_for 40 resumed victim.err $job 1 $older
[ "$FAILED" -gt 0 ] && { say "--- the last job, before its scancel ---"; scontrol show job "$job" >&2; }
scancel "$job"
scontrol delete ReservationName=maint_fail

if [ "$FAILED" -gt 0 ]; then
  say "--- controller log ---"; tail -25 "$T/controller.log" >&2
  say "--- memjob.err / victim.err ---"; tail -n 8 memjob.err victim.err >&2
  say "--- node daemons ---"; tail -n 12 "$T/daemon.log" "$T/daemon-b.log" >&2
  say "--- squeue / sinfo ---"; squeue >&2; sinfo >&2
  say "--- the last job ---"; scontrol show job "$job" >&2
  say "--- slurmctld log ---"; tail -n 25 /var/log/slurm/slurmctld.log >&2
fi
say ""
say "maintenance_test.sh: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
