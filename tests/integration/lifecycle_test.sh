#!/bin/bash
# Lineages (docs/architecture.md, "Lineages"): a workload whose program exits by itself, whatever
# its status, finishes its label's run: a restore by label then starts fresh and says why, the
# run's checkpoints stay listed (RUN "finished") and restorable by id. A workload ended from
# outside (a kill, even one its program handles and exits 0 after) keeps its lineage open, and
# a new run's checkpoints are resumed by label again.
source "$(dirname "$0")/lib.sh"
export COUNTER_SLEEP=0.1
start_daemon || exit 1

# counting LABEL MAX: a counter to MAX under LABEL, its output in $T/LABEL.out; prints its id.
counting() {
  COUNTER_MAX=$2 "$CEDANA" run --label "$1" --output "$T/$1.out" -- "$WORKLOADS/counter.sh" 2>/dev/null
}
run_of() { # run_of CK: "finished" or "open", as `cedana checkpoints` lists it
  "$CEDANA" checkpoints --json | python3 -c "import json, sys
print(next((c['run'] for c in json.load(sys.stdin) if c['id'] == sys.argv[1]), 'missing'))" "$1"
}
recorded() { grep -q "lineage: label $1: its last run finished at .* (exit $2)" "$T/daemon.log"; }

# --- a run that ends by itself finishes its lineage -------------------------------------------
w=$(counting done 40)
wait_for 10 at_least "$T/done.out" "Counter: " 5
ck=$(dump_id "$w" --leave-running)
check "finished: a checkpoint mid-run" test -n "$ck"
check "finished: the run is open while the workload runs" test "$(run_of "$ck")" = open
check "finished: the workload ran to its end (exit 0)" wait_for 30 is_status "$w" exited
check "finished: the daemon recorded the end of the label's run" wait_for 10 recorded done 0
check "finished: its checkpoint is listed as of a finished run" test "$(run_of "$ck")" = finished
check "finished: the table shows it" bash -c "'$CEDANA' checkpoints --label done | grep -q ' finished  *good$'"
out=$("$CEDANA" restore --label done 2>&1)
check "finished: a restore by label refuses to resume the finished run" test $? -ne 0
check "finished: and says why" grep -q "label done: its last run finished at .* (exit 0); its checkpoints are kept and can be restored by id" <<<"$out"
n=$(last_number "$T/done.out" "Counter: ")
r=$(restore_id "$ck")
check "finished: its checkpoint is still restored by id" test -n "$r"
check "finished: and counts on from where it was" wait_for 10 bash -c "[ \$(grep -c 'Counter: 15\$' '$T/done.out') -ge 2 ]"
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null
# A new run of the label: its checkpoints are resumed by label again, the older ones are not.
w=$(counting done 600)
wait_for 10 at_least "$T/done.out" "Counter: " $((n + 5))
ck_new=$(dump_id "$w")
check "new run: its checkpoint belongs to an open run" test "$(run_of "$ck_new")" = open
r=$(restore_id --label done)
check "new run: a restore by label resumes the new run's checkpoint" \
  test -n "$r" -a "$(wl_field "$r" restored_from)" = "$ck_new"
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null

# --- any exit status is the program's decision ------------------------------------------------
w=$("$CEDANA" run --label failing -- bash -c 'sleep 1.5; exit 3' 2>/dev/null)
ck=$(dump_id "$w" --leave-running)
check "exit 3: the workload ended" wait_for 10 is_status "$w" exited
check "exit 3: the end was recorded with its status" wait_for 10 recorded failing 3
check "exit 3: its checkpoint belongs to a finished run" test "$(run_of "$ck")" = finished

# --- ended from outside: the lineage stays open -----------------------------------------------
w=$(counting killed 600)
wait_for 10 at_least "$T/killed.out" "Counter: " 3
ck=$(dump_id "$w" --leave-running)
"$CEDANA" kill --wait "$w" >/dev/null
check "killed: the lineage stays open" test "$(run_of "$ck")" = open
r=$(restore_id --label killed)
check "killed: a restore by label resumes it" test -n "$r"
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null
# A program that handles SIGTERM and exits 0 was still ended by the kill.
w=$("$CEDANA" run --label graceful -- bash -c 'trap "exit 0" TERM; while :; do sleep 0.1; done' 2>/dev/null)
sleep 0.5
ck=$(dump_id "$w" --leave-running)
"$CEDANA" kill --signal 15 --wait "$w" >/dev/null
check "graceful kill: the workload exited 0" test "$(wl_field "$w" exit_code)" = 0
sleep 2.5  # the keeper's period: an end it wrongly took for the program's would be recorded now
check "graceful kill: no end was recorded" bash -c "! grep -q 'lineage: label graceful' '$T/daemon.log'"
check "graceful kill: the lineage stays open" test "$(run_of "$ck")" = open
# A checkpoint that stops the workload is no end of the run either.
w=$(counting stopped 600)
wait_for 10 at_least "$T/stopped.out" "Counter: " 3
ck=$(dump_id "$w")
check "stopped by a checkpoint: the lineage stays open" test "$(run_of "$ck")" = open

finish
