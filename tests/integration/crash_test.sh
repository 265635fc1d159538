#!/bin/bash
# Crash safety (docs/architecture.md, "A daemon killed part-way"): the node daemon is killed with
# SIGKILL at each step of a dump (while CRIU runs, after CRIU left the tree stopped, after the
# streams were stored, after the commit) and of a direct restore (before the tree is
# continued). The daemon that starts next must leave no workload stopped (continued, or, after
# a commit, the stop finished), no half-written checkpoint in the store and nothing in the work
# dir. The exact steps are reached with CEDANA_TEST_PAUSE_AT (common/fault_point.h). While the
# daemon runs, images dirs nobody uses are swept, and a running dump's is not.
source "$(dirname "$0")/lib.sh"
export COUNTER_SLEEP=0.1
MIB=${MEMSTATE_MIB:-512}

kill_daemon_hard() { kill -9 "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=; }
paused_at() { grep -q "test: paused at $1 " "$T/daemon.log"; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
stopped() { [ "$(state_of "$1")" = T ]; }
running_not_stopped() { kill -0 "$1" 2>/dev/null && ! stopped "$1"; }
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(state_of "$1")" = Z ]; }
# Stream files without a manifest beside them, anywhere in the checkpoint dir.
half_written() {
  find "$CEDANA_CHECKPOINT_DIR" -name 'stream-*' 2>/dev/null | while read -r f; do
    [ -e "$(dirname "$f")/manifest.json" ] || echo "$f"
  done
}
nothing_half_written() { [ -z "$(half_written)" ]; }
listed() { "$CEDANA" checkpoints --label "$1" --json | grep -q '"id"'; }
not_listed() { ! listed "$1"; }
exited_ok() { is_status "$1" exited && [ "$(wl_field "$1" exit_code)" = 0 ]; }
counter() { # counter LABEL: a counter workload; prints its id once it counts
  local w
  w=$("$CEDANA" run --label "$1" --output "$T/$1.out" -- "$WORKLOADS/counter.sh" 2>/dev/null)
  wait_for 10 at_least "$T/$1.out" "Counter: " 3
  echo "$w"
}

# --- a dump interrupted at each of its steps ---------------------------------------------------
for step in dumped packed committed; do
  start_daemon CEDANA_TEST_PAUSE_AT=dump:$step || exit 1
  label=crash-$step
  w=$(counter "$label")
  pid=$(wl_field "$w" pid)
  "$CEDANA" dump "$w" >"$T/$label.dump" 2>&1 &
  dump_cli=$!
  check "$step: the dump reached the step" wait_for 60 paused_at "dump:$step"
  check "$step: the tree is stopped when the daemon dies" stopped "$pid"
  if [ $step = dumped ]; then
    sleep 3  # past the housekeeper's sweep (every 2 s): the dump's claimed images dir stays
    check "$step: the held dump's images dir is not swept" bash -c "ls '$CEDANA_CHECKPOINT_WORK_DIR' | grep -q '^dump-'"
  fi
  kill_daemon_hard
  wait "$dump_cli" 2>/dev/null
  start_daemon || exit 1
  if [ $step = committed ]; then
    check "$step: the restarted daemon finished the stop" wait_for 10 gone "$pid"
    check "$step: the workload is recorded as checkpointed" wait_for 5 is_status "$w" checkpointed
    check "$step: the checkpoint is listed" listed "$label"
    n=$(last_number "$T/$label.out" "Counter: ")
    r=$(restore_id --label "$label")
    check "$step: it restores and counts on" wait_for 10 at_least "$T/$label.out" "Counter: " $((n + 3))
    [ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null
  else
    check "$step: the restarted daemon continued the workload" wait_for 10 running_not_stopped "$pid"
    n=$(last_number "$T/$label.out" "Counter: ")
    check "$step: it counts on" wait_for 10 at_least "$T/$label.out" "Counter: " $((n + 3))
    check "$step: it is still running for the daemon" is_status "$w" running
    check "$step: no checkpoint is listed" not_listed "$label"
    "$CEDANA" kill --wait "$w" >/dev/null
  fi
  check "$step: nothing half-written in the checkpoint dir" nothing_half_written
  check "$step: the work dir is empty" wait_for 10 work_dir_empty
  check "$step: the daemon said what it put right" grep -q "recovery: the daemon stopped .*checkpoint" "$T/daemon.log"
  stop_daemon
done

# --- an images dir that no dump or restore uses is swept while the daemon runs ----------------
start_daemon || exit 1
mkdir -p "$CEDANA_CHECKPOINT_WORK_DIR/dump-left-over/x" "$CEDANA_CHECKPOINT_WORK_DIR/restore-left-over"
check "sweep: left-over images dirs are removed while the daemon runs" \
  wait_for 10 bash -c "[ ! -e '$CEDANA_CHECKPOINT_WORK_DIR/dump-left-over' ] && [ ! -e '$CEDANA_CHECKPOINT_WORK_DIR/restore-left-over' ]"
stop_daemon

# --- checkpoints abandoned by a node that never came back are swept from the store at start -----
# Streams without a manifest, begun (by their id) longer ago than any dump lasts; a younger one
# may still be written by another node and stays, and so does an old committed one.
plant() { mkdir -p "$CEDANA_CHECKPOINT_DIR/root/abandoned/$1" && echo x >"$CEDANA_CHECKPOINT_DIR/root/abandoned/$1/stream-0"; }
old=20200101-000000-0badc0de young=$(date -u +%Y%m%d-%H%M%S)-0000cafe kept=20200101-000000-c0mm177ed
plant "$old" && plant "$young" && plant "$kept" && echo '{}' >"$CEDANA_CHECKPOINT_DIR/root/abandoned/$kept/manifest.json"
start_daemon || exit 1
check "abandoned: an old uncommitted checkpoint is removed at start" test ! -e "$CEDANA_CHECKPOINT_DIR/root/abandoned/$old"
check "abandoned: and the daemon says so" grep -q "removed the abandoned checkpoint root/abandoned/$old" "$T/daemon.log"
check "abandoned: a young uncommitted one stays (a dump elsewhere may be writing it)" \
  test -e "$CEDANA_CHECKPOINT_DIR/root/abandoned/$young/stream-0"
check "abandoned: an old committed one stays" test -e "$CEDANA_CHECKPOINT_DIR/root/abandoned/$kept/stream-0"
stop_daemon
rm -rf "$CEDANA_CHECKPOINT_DIR/root/abandoned"

# --- a dump interrupted while CRIU runs (a CRIU that outlives the daemon is waited for) ---------
start_daemon || exit 1
w=$("$CEDANA" run --label crash-criu --output "$T/crash-criu.out" -- "$MEMSTATE" "$MIB" "$T/crash-criu.flag" 0 2>/dev/null)
wait_for 120 grep -q ready "$T/crash-criu.out" || fail "crash-criu: the workload never got ready"
pid=$(wl_field "$w" pid)
"$CEDANA" dump "$w" --compression gzip >"$T/crash-criu.dump" 2>&1 &
dump_cli=$!
wait_for 20 bash -c "grep -q TracerPid:.[1-9] /proc/$pid/status" || say "crash-criu: CRIU was not seen on the tree"
sleep 0.3
kill_daemon_hard
wait "$dump_cli" 2>/dev/null
start_daemon || exit 1
check "criu: the restarted daemon continued the workload" wait_for 130 running_not_stopped "$pid"
touch "$T/crash-criu.flag"
check "criu: the workload's memory is intact (exit 0)" wait_for 60 exited_ok "$w"
check "criu: nothing half-written in the checkpoint dir" nothing_half_written
check "criu: the work dir is empty" wait_for 10 work_dir_empty

# --- a direct restore interrupted before its tree was continued -------------------------------
w=$(counter crash-restore)
ck=$(dump_id "$w")
stop_daemon
start_daemon CEDANA_TEST_PAUSE_AT=restore:unverified || exit 1
"$CEDANA" restore "$ck" >"$T/crash-restore.restore" 2>&1 &
restore_cli=$!
check "restore: the direct restore reached the unverified tree" wait_for 60 paused_at restore:unverified
r=$("$CEDANA" ps --json | python3 -c "import json, sys
print(next((w['id'] for w in json.load(sys.stdin) if w.get('restored_from') == sys.argv[1]), ''))" "$ck")
rpid=$(wl_field "$r" pid)
check "restore: its tree is stopped when the daemon dies" stopped "${rpid:-0}"
kill_daemon_hard
wait "$restore_cli" 2>/dev/null
start_daemon || exit 1
check "restore: the restarted daemon killed the unverified tree" wait_for 10 gone "${rpid:-0}"
check "restore: the checkpoint is kept" listed crash-restore
check "restore: the work dir is empty" wait_for 10 work_dir_empty
n=$(last_number "$T/crash-restore.out" "Counter: ")
r=$(restore_id "$ck")
check "restore: a restore of it then works and counts on" \
  wait_for 10 at_least "$T/crash-restore.out" "Counter: " $((n + 3))
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null

finish
