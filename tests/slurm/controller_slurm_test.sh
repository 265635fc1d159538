#!/bin/bash
# The controller with a real SLURM cluster (tests/slurm/cluster.sh): a node daemon that reports
# to `cedana-slurm daemon`, an enabled job, a policy that checkpoints it on schedule while it
# keeps running, a preemption and requeue it resumes from (the job's timeline), cancellation and
# resubmission resuming from the newest checkpoint, and the web UI driven in headless Chromium
# (tests/ui/ui_test.mjs) against this live controller.
#
# Variables: CEDANA, CEDANA_SLURM (binaries), UI_SCREENSHOTS (where the UI test's PNGs go).
source "$(cd "$(dirname "$0")" && pwd)/controller_env.sh"
LABEL=ctl-job
sed "s/CEDANA_CHECKPOINT=victim/CEDANA_CHECKPOINT=$LABEL/; s/--job-name=victim/--job-name=ctl-victim/" \
  "$HERE/victim.sbatch" >ctl.sbatch
job=$(submit ctl.sbatch)
check "the job runs" wait_for 30 counter_at_least victim.out 2
enabled() { api GET "/jobs/$job" | jq_py "d['state'] == 'RUNNING' and d['enabled'] and d['label'] == '$LABEL'" | grep -q True; }
check "the controller sees the job as running and managed (libslurm + node daemon)" wait_for 20 enabled
check "the node daemon registered" bash -c "api GET /nodes | grep -q '\"status\":\"up\"'"

# A policy every 10 s: checkpoints on schedule, the job keeps running.
policy=$(api POST /policies "{\"name\":\"every-10s\",\"interval_seconds\":10,\"selector\":{\"label\":\"$LABEL\"}}" | jq_py "d['id']")
check "policy created" test -n "$policy"
policy_checkpoints() { api GET "/checkpoints?label=$LABEL" | jq_py "' '.join(str(c['created_ms']) for c in d if c['policy_id'] == $policy)"; }
two_made() { [ "$(policy_checkpoints | wc -w)" -ge 2 ]; }
check "the policy made two checkpoints" wait_for 60 two_made
# The schedule: the policy's operations were queued no sooner than its interval after each other
# (the scheduler's own record; the exact timing is scheduler_test's). How soon after is no check:
# two checkpoints within 60 s (above) is.
policy_queue_gaps() { api GET /operations | jq_py "(lambda t: ' '.join(str(a - b) for a, b in zip(t, t[1:])))(sorted((o['created_ms'] for o in d if o['policy_id'] == $policy), reverse=True))"; }
gaps=$(policy_queue_gaps)
check "on schedule: the policy's dumps were queued at least 10 s apart (gaps ms: ${gaps:-none})" \
  bash -c "[ -n '$gaps' ] && for g in $gaps; do [ \$g -ge 10000 ] || exit 1; done"
n=$(last_counter victim.out)
check "the job kept running through the policy's checkpoints" wait_for 10 counter_at_least victim.out $((n + 2))
check "still RUNNING in SLURM" bash -c "squeue -h -j $job -o %T | grep -q RUNNING"
# At least one of the policy's operations, and every one of them done (all() of nothing is true).
ops_done() { api GET /operations | jq_py "(lambda ops: len(ops) > 0 and all(o['state'] == 'done' for o in ops))([o for o in d if o['policy_id'] == $policy])" | grep -q True; }
# The policy queues a dump every 10 s: one may be queued or running right now; wait for a
# moment when none is (a failed one stays failed).
check "the policy's operations finished as done" wait_for 30 ops_done
check "each done operation says how long each phase of its dump took" bash -c "api GET /operations | jq_py \"all([p['phase'] for p in o['phases']] == ['queue', 'prepare', 'freeze', 'store', 'commit', 'finish'] for o in d if o['policy_id'] == $policy and o['state'] == 'done')\" | grep -q True"
check "checkpoints listed with job id and node" \
  bash -c "api GET '/checkpoints?label=$LABEL' | grep -q '\"job_id\":$job'"

# Preempted and requeued: it resumes, and its timeline (the API's, then the UI's) shows both runs.
cp "$HERE/preemptor.sbatch" .
preemptor=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
check "preempted: checkpointed" wait_for 30 grep -q "taken on preemption" victim.err
preempt_ck=$(grep -o 'checkpoint [0-9a-f-]* of label [^ ]* taken on preemption' victim.err | tail -n1 | awk '{print $2}')
wait_job_state "$job" PENDING 120
wait_job_state "$preemptor" RUNNING 60
scancel "$preemptor"
release_requeue_hold "$job"
check "preempted: resumed as restart 1" wait_for 60 resumed victim.err "$job" 1 "$preempt_ck"
# Run 0 submitted, started fresh, checkpointed by the policy, preempted, checkpointed on
# preemption and requeued; run 1 resumed from that checkpoint; all in time order.
timeline_of_both_runs() {
  api GET "/jobs/$job/timeline" | python3 -c '
import json, sys
events, ck = json.load(sys.stdin)["events"], sys.argv[1]
of = lambda kind, run: [e for e in events if e["kind"] == kind and e["run"] == run]
ok = (of("submitted", 0) and [e["detail"] for e in of("started", 0)] == ["fresh"] and of("preempted", 0)
      and of("requeued", 0) and any(e["detail"] == "policy" for e in of("checkpoint", 0))
      and any(e["detail"] == "preemption" and e["checkpoint_id"] == ck and e["duration_ms"] > 0 for e in of("checkpoint", 0))
      and [(e["detail"], e.get("checkpoint_id")) for e in of("started", 1)] == [("resumed", ck)]
      and [e["at_ms"] for e in events] == sorted(e["at_ms"] for e in events))
sys.exit(0 if ok else 1)' "$preempt_ck"
}
check "the job's timeline: both runs, the checkpoints, the preemption and the requeue, in order" \
  wait_for 20 timeline_of_both_runs
status_of() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$URL/v1$2"; }
check "the timeline of a job nobody knows is 404" test "$(status_of "$ADMIN" /jobs/999999/timeline)" = 404
other=$(api POST /tokens '{"user":"nobody"}' | jq_py "d['token']")
check "another user's token does not see the job's timeline (404)" \
  test "$(status_of "$other" "/jobs/$job/timeline")" = 404

# A run that ended by itself after a checkpoint: the API (and below the UI) marks its checkpoint.
w=$("$CEDANA" run --label ui-finished -- bash -c 'sleep 2' 2>/dev/null)
finished_ck=$("$CEDANA" dump "$w" --leave-running 2>/dev/null)
finished_run() { [ "$(api GET "/checkpoints/$1" | jq_py "d.get('run')")" = finished ]; }
check "the API marks the checkpoint of a run that ended by itself as finished" \
  wait_for 30 finished_run "$finished_ck"

# A job whose label's only checkpoint cannot be restored (a stream altered in storage) starts
# fresh: its stderr says why, and the jobs list marks it with the reason.
w=$("$CEDANA" run --label ui-broken -- sleep 300 2>/dev/null)
broken_ck=$("$CEDANA" dump "$w" 2>/dev/null)
printf 'garbage' | dd of="$T/checkpoints/root/ui-broken/$broken_ck/stream-0" bs=1 seek=64 conv=notrunc status=none
broken=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=ui-broken -o broken.out -e broken.err --wrap 'sleep 300')
check "a job whose checkpoint cannot be restored starts fresh, saying why" \
  wait_for 30 grep -q "no checkpoint of label ui-broken could be restored (.*checksum mismatch" broken.err
notice_of() { api GET "/jobs/$1" | jq_py "d.get('notice', '')"; }
marked() { notice_of "$broken" | grep -q "^started fresh: no checkpoint of label ui-broken could be restored (.*checksum mismatch"; }
check "the API marks the job with the reason" wait_for 20 marked

# The web UI in headless Chromium, against this controller and job (its own policy on the label).
if [ -x /usr/bin/chromium ] && [ -d "$ROOT/tests/ui/node_modules/playwright-core" ]; then
  mkdir -p "$UI_SCREENSHOTS"
  CONTROLLER_URL=$URL ADMIN_TOKEN=$ADMIN UI_LABEL=$LABEL SCREENSHOT_DIR=$UI_SCREENSHOTS CHECKPOINT_WAIT_SECONDS=90 \
    FINISHED_CHECKPOINT=$finished_ck NOTICE_JOB=$broken TIMELINE_JOB=$job TIMELINE_CHECKPOINT=$preempt_ck \
    node "$ROOT/tests/ui/ui_test.mjs" >"$T/ui.out" 2>&1
  ui=$?
  grep -E '^(PASS|FAIL)' "$T/ui.out" | sed 's/^/  ui: /' >&2
  check "web UI test in headless Chromium (screenshots in $UI_SCREENSHOTS)" test $ui = 0
  [ $ui = 0 ] || tail -5 "$T/ui.out" >&2
else
  fail "web UI test: needs /usr/bin/chromium and tests/ui/node_modules (scripts/setup.sh installs both)"
fi

scancel "$broken"
api DELETE "/policies/$policy" >/dev/null
# Cancel and resubmit: resumes from the newest checkpoint (the one scancel takes).
scancel "$job"
check "scancel takes a checkpoint" wait_for 30 grep -q "taken on SIGTERM" victim.err
newest() { api GET "/checkpoints?label=$LABEL" | jq_py "d[0]['id'] if d else ''"; }
sigterm_ck=$(grep -o 'checkpoint [0-9a-f-]* of label [^ ]* taken on SIGTERM' victim.err | tail -n1 | awk '{print $2}')
newest_is() { [ -n "$1" ] && [ "$(newest)" = "$1" ]; }
check "the controller lists the scancel checkpoint as the newest" wait_for 15 newest_is "$sigterm_ck"
again=$(submit ctl.sbatch)
check "the resubmitted job resumes from the newest checkpoint" \
  wait_for 40 resumed victim.err $again 0 $sigterm_ck
scancel "$again"

if [ "$FAILED" -gt 0 ]; then
  say "--- controller log ---"; tail -25 "$T/controller.log" >&2
  say "--- node daemon (agent, warnings) ---"; grep -E "agent|warn|error" "$T/daemon.log" | tail -15 >&2
  say "--- victim.err ---"; tail -10 victim.err >&2
fi
say ""
say "controller_slurm_test.sh: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
