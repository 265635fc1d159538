# The checks and helpers every SLURM suite uses (source it; it sets PASSED/FAILED to 0).
PASSED=0; FAILED=0
say() { printf '%s\n' "$*" >&2; }
pass() { PASSED=$((PASSED + 1)); say "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); say "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
wait_for() { local secs=$1; shift; local deadline=$((SECONDS + secs)); until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.5; done; }
last_counter() { grep -o 'Counter: [0-9]*' "$1" 2>/dev/null | tail -n1 | grep -o '[0-9]*$'; }
first_counter() { grep -o 'Counter: [0-9]*' "$1" 2>/dev/null | head -n1 | grep -o '[0-9]*$'; }
counter_at_least() { local n; n=$(last_counter "$1"); [ -n "$n" ] && [ "$n" -ge "$2" ]; }
consecutive() { # counters in FILE are consecutive (no repeat, no gap)
  python3 - "$1" <<'PY'
import re, sys
nums = [int(m) for m in re.findall(r"^Counter: (\d+)$", open(sys.argv[1]).read(), re.M)]
ok = len(nums) > 1 and nums == list(range(nums[0], nums[0] + len(nums)))
if not ok: print(f"counters not consecutive: {nums[:8]} ... {nums[-8:]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
submit() { sbatch --parsable "$@" | cut -d';' -f1; }

# The SLURM suites use the host's node daemon socket. A daemon already answering there (a
# developer's, or one left by an aborted run) would take this suite's requests with its own
# config, and the suite would fail much later at an unrelated check: stop at once instead.
refuse_other_node_daemon() {
  local status socket
  status=$("${CEDANA:-cedana}" daemon status 2>/dev/null) || return 0
  socket=$("${CEDANA:-cedana}" config show 2>/dev/null | awk '$1 == "daemon.socket" {print $2}')
  say "another cedana node daemon already listens on $socket ($(grep '^checkpoint dir' <<<"$status"));"
  say "this suite needs that socket for its own daemon: stop the other one first"
  say "(systemctl stop cedana, or kill the pid that \`ss -xlp | grep $socket\` shows)"
  exit 1
}

# start_node_daemon OUT_FILE [VAR=VALUE...]: starts this suite's node daemon (DAEMON_PID) and
# waits until it answers; fails if the daemon that answers is not the one just started.
start_node_daemon() {
  local out=$1; shift
  env "$@" "${CEDANA:-cedana}" daemon start >>"$out" 2>&1 &
  DAEMON_PID=$!
  wait_for 20 "${CEDANA:-cedana}" daemon status >/dev/null 2>&1 && kill -0 "$DAEMON_PID" 2>/dev/null
}
