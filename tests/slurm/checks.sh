# The checks and helpers every SLURM suite uses (source it; it sets PASSED/FAILED to 0).
PASSED=0; FAILED=0
say() { printf '%s\n' "$*" >&2; }
pass() { PASSED=$((PASSED + 1)); say "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); FAILED_CHECKS+=("$*"); say "FAIL: $*"; }
# The failed checks once more, as the very last lines (the suites' cleanups end with it): a long
# suite's FAIL lines are far from its end, and a CI report keeps a run's head and tail.
FAILED_CHECKS=()
say_failed_checks() { local c; for c in "${FAILED_CHECKS[@]}"; do say "failed: $c"; done; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# release_requeue_hold JOB: SLURM holds a requeued job ~120 s (its BeginTime). Lets it start now,
# once it is pending again (an update made while the requeue is still completing is refused,
# leaving the hold in place), and a second after that: slurmd refuses a job credential issued in
# the same second as the kill of the job's previous run ("Job credential revoked").
release_requeue_hold() {
  local _i
  for _i in $(seq 120); do [ "$(job_state "$1")" = PENDING ] && break; sleep 0.5; done
  sleep 1.1
  scontrol update jobid="$1" StartTime=now >/dev/null 2>&1
}
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
counts_from_zero() { consecutive "$1" && [ "$(first_counter "$1")" = 0 ]; }  # 0, 1, ... each once
count_of() { grep -c -- "$2" "$1" 2>/dev/null; }  # count_of FILE PATTERN: lines that match
# resumed FILE JOB RESTART [CHECKPOINT]: FILE (the job's stderr) has the proxy's one line for
# that run of the job resuming (from that checkpoint).
resumed() { grep -q "^cedana: resumed from checkpoint ${4:-[^ ]*} taken at .* (job $2, restart $3, label " "$1"; }
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

# --- the node side of a SLURM suite (needs T, CEDANA, ROOT, DAEMON_PID and cluster.sh) ----------
CONFIG=/etc/cedana/config.json
# use_node_config: /etc/cedana/config.json for this run, with everything under $T; the machine's
# own config is kept in $T and put back by end_node_suite.
use_node_config() {
  [ -f "$CONFIG" ] && cp -p "$CONFIG" "$T/config.json.orig"
  mkdir -p /etc/cedana
  cat >"$CONFIG" <<JSON
{ "checkpoint": { "dir": "$T/checkpoints", "work_dir": "$T/work", "keep": 10 },
  "daemon": { "state_dir": "$T/state", "log_file": "$T/daemon.log", "cluster_key_file": "$T/cluster.key" } }
JSON
}
# install_cedana_slurm: cedana on the cluster as the seeds install it; waits for the node again.
install_cedana_slurm() {
  { "$CEDANA" plugin install slurm slurm/wlm >/dev/null && "$CEDANA" slurm setup >/dev/null 2>&1; } || return 1
  wait_for 30 bash -c "sinfo -h -n $CLUSTER_NODE -o %t | grep -qE 'idle|mix|alloc'"
  return 0
}
# end_node_suite [USER...]: cancels root's and the users' jobs, stops the workloads, the node
# daemon and the cluster, and puts SLURM's files and the config back.
end_node_suite() {
  local u
  for u in root "$@"; do scancel --user="$u" 2>/dev/null; done
  sleep 1
  bash "$ROOT/tests/kill_workloads.sh" "$T/state"
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
  "$CEDANA" slurm destroy --no-restart >/dev/null 2>&1
  cluster_stop
  if [ -f "$T/config.json.orig" ]; then cp -p "$T/config.json.orig" "$CONFIG"; else rm -f "$CONFIG"; fi
  say_failed_checks
}

# preempt_and_resume JOB ERR [WHAT]: a preemptor takes compute-01 from JOB, whose checkpoint is
# taken (WHAT says what it holds); JOB is requeued, the preemptor cancelled, and JOB resumes from
# its checkpoint. Needs HERE (tests/slurm).
preempt_and_resume() {
  local p taken resumed
  taken=$(count_of "$2" "taken on preemption"); resumed=$(count_of "$2" "resumed from checkpoint")
  p=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null "$HERE/preemptor.sbatch")
  check "job $1: checkpointed at preemption${3:+, $3}" \
    wait_for 60 bash -c "[ \$(grep -c 'taken on preemption' $2) -gt ${taken:-0} ]"
  check "job $1: requeued" wait_job_state "$1" PENDING 120
  scancel "$p"
  release_requeue_hold "$1"
  check "job $1: resumed from its checkpoint" \
    wait_for 60 bash -c "[ \$(grep -c 'resumed from checkpoint' $2) -gt ${resumed:-0} ]"
}
