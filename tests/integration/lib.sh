#!/bin/bash
# Shared harness of the integration tests: each test script gets its own node daemon, socket,
# state dir and checkpoint dir (so scripts can run in parallel), real CRIU underneath, and a
# cleanup that stops everything it started by pid.
#
# Variables: CEDANA (the cedana binary), WORKLOADS (tests/workloads), MEMSTATE (memstate binary).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CEDANA=${CEDANA:-$ROOT/build/src/cli/cedana}
WORKLOADS=${WORKLOADS:-$ROOT/tests/workloads}
MEMSTATE=${MEMSTATE:-$ROOT/build/tests/memstate}
PASSED=0
FAILED=0
T=$(mktemp -d /var/tmp/cedana-it.XXXXXX)
DAEMON_PID=
CLEANUPS=()

export CEDANA_CONFIG=$T/config.json
export CEDANA_DAEMON_SOCKET=$T/cedana.sock
export CEDANA_DAEMON_STATE_DIR=$T/state
# tests/s3/with_rgw.sh points the same suites at an S3 bucket.
export CEDANA_CHECKPOINT_DIR=${CEDANA_TEST_CHECKPOINT_DIR:-$T/checkpoints}
export CEDANA_CHECKPOINT_WORK_DIR=$T/work
export CEDANA_DAEMON_LOG_FILE=$T/daemon.log
export CEDANA_CLUSTER_KEY_FILE=$T/cluster.key
export CEDANA_CRIU_TIMEOUT_SECONDS=${CEDANA_CRIU_TIMEOUT_SECONDS:-120}

say() { printf '%s\n' "$*" >&2; }
pass() { PASSED=$((PASSED + 1)); say "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); FAILED_CHECKS+=("$*"); say "FAIL: $*"; }
# The failed checks once more, as the very last lines (the suites' cleanups end with it): a long
# suite's FAIL lines are far from its end, and a CI report keeps a run's head and tail.
FAILED_CHECKS=()
say_failed_checks() { local c; for c in "${FAILED_CHECKS[@]}"; do say "failed: $c"; done; }
check() { # check "description" command...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# start_daemon [VAR=VALUE...]: starts this test's daemon, with these variables set for it.
start_daemon() {
  env "$@" "$CEDANA" daemon start >>"$T/daemon.out" 2>&1 &
  DAEMON_PID=$!
  for _ in $(seq 100); do
    "$CEDANA" daemon status >/dev/null 2>&1 && return 0
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.1
  done
  say "daemon did not start:"; cat "$T/daemon.out" >&2
  return 1
}

stop_daemon() {
  [ -n "$DAEMON_PID" ] || return 0
  kill "$DAEMON_PID" 2>/dev/null
  wait "$DAEMON_PID" 2>/dev/null
  DAEMON_PID=
}

# Kills every workload this test's daemon knows, then the daemon, then runs CLEANUPS.
cleanup() {
  bash "$ROOT/tests/kill_workloads.sh" "$T/state"
  stop_daemon
  for c in "${CLEANUPS[@]}"; do eval "$c"; done
  sleep 0.3
  rm -rf "$T"
  say_failed_checks
}
trap cleanup EXIT

finish() {
  say ""
  say "$(basename "$0"): $PASSED passed, $FAILED failed"
  if [ "$FAILED" -gt 0 ]; then
    say "--- daemon log: warnings and errors ---"
    grep -E '^[0-9T:.-]+Z (warn|error) ' "$T/daemon.log" | tail -20 >&2
    say "--- daemon log (tail) ---"; tail -15 "$T/daemon.log" >&2
    exit 1
  fi
  exit 0
}

# work_dir_empty [DIR]: no images dir in the work dir. A dump or restore retires its images dir
# to the daemon's housekeeper, which removes it just after the reply: wait_for it.
work_dir_empty() { [ -z "$(ls -A "${1:-$CEDANA_CHECKPOINT_WORK_DIR}" 2>/dev/null)" ]; }

# wait_for SECONDS command...: polls until the command succeeds.
wait_for() {
  local secs=$1; shift
  local deadline=$((SECONDS + secs))
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.1
  done
}

# JSON field of a workload: wl_field ID FIELD
wl_field() {
  "$CEDANA" ps --json | python3 -c "import json,sys
for w in json.load(sys.stdin):
    if w['id'] == sys.argv[1]: print(w.get(sys.argv[2], ''))" "$1" "$2"
}
wl_status() { wl_field "$1" status; }
is_status() { [ "$(wl_status "$1")" = "$2" ]; }

# Number of lines matching a pattern in a file.
count_lines() { grep -c -- "$2" "$1" 2>/dev/null || true; }
# Highest N in lines "PREFIX N".
last_number() { grep -o -- "$2[0-9]*" "$1" 2>/dev/null | tail -n1 | grep -o '[0-9]*$'; }
at_least() { local n; n=$(last_number "$1" "$2"); [ -n "$n" ] && [ "$n" -ge "$3" ]; }
# At least N lines of FILE match PATTERN.
lines_at_least() { [ "$(count_lines "$1" "$2")" -ge "$3" ]; }

# Lines "PREFIX N" in FILE must be 0,1,2,... with no gap, no repeat, no restart.
sequence_ok() {
  python3 - "$1" "$2" <<'PY'
import re, sys
path, prefix = sys.argv[1], sys.argv[2]
nums = [int(m.group(1)) for m in (re.match(re.escape(prefix) + r"(\d+)$", l.strip()) for l in open(path)) if m]
ok = nums == list(range(len(nums))) and len(nums) > 0
if not ok:
    print(f"sequence of '{prefix}' in {path} is broken: {nums[:5]}...{nums[-20:]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# cli_quiet ARGS...: runs the CLI with its messages kept in cli.err; when it fails, its error is
# also printed, so a failing check shows the reason next to it.
cli_quiet() {
  local err=$T/cli.$BASHPID rc
  "$CEDANA" "$@" 2>"$err"
  rc=$?
  cat "$err" >>"$T/cli.err"
  [ $rc -eq 0 ] || sed "s/^/  (cedana $1) /" "$err" >&2
  rm -f "$err"
  return $rc
}
# dump_id ID [args]: dumps and prints the checkpoint id
dump_id() { cli_quiet dump "$@"; }
restore_id() { cli_quiet restore "$@"; }
# holds_no_stored_stream PID: neither the process nor its children have a checkpoint's stored
# stream or chunk open (CRIU is given them to read pages in place; its restorer closes them).
holds_no_stored_stream() {
  local p fd target
  [ -n "$1" ] && [ -d /proc/"$1" ] || { echo "no process $1 to look at" >&2; return 1; }
  for p in "$1" $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    for fd in /proc/"$p"/fd/*; do
      target=$(readlink "$fd") || continue
      if [[ $target == */stream-[0-9]* || $target == */.chunks/* ]]; then
        echo "pid $p holds $target" >&2
        return 1
      fi
    done
  done
}

# check_memstate_restore TAG CHECKPOINT FLAG: restores a checkpoint of tests/workloads/memstate,
# releases it through its flag file and checks that it ran to its end with its state intact
# (memstate exits 0 only when its checksum matches).
check_memstate_restore() {
  local r
  r=$(restore_id "$2")
  check "$1: restore" test -n "$r"
  check "$1: the restored processes hold no stored stream or chunk open" \
    holds_no_stored_stream "$(wl_field "$r" pid)"
  touch "$3"
  check "$1: restored workload finished" wait_for 120 is_status "$r" "exited"
  check "$1: restored state checksum matches (exit 0)" test "$(wl_field "$r" exit_code)" = 0
}
