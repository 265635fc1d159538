#!/bin/bash
# The controller with a real SLURM cluster (tests/slurm/cluster.sh): a node daemon that reports
# to `cedana-slurm daemon`, an enabled job, a policy that checkpoints it on schedule while it
# keeps running, cancellation and resubmission resuming from the newest checkpoint, and the web
# UI driven in headless Chromium (tests/ui/ui_test.mjs) against this live controller.
#
# Variables: CEDANA, CEDANA_SLURM (binaries), UI_SCREENSHOTS (where the UI test's PNGs go).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$HERE/cluster.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
CEDANA_SLURM=${CEDANA_SLURM:-/usr/local/bin/cedana-slurm}
UI_SCREENSHOTS=${UI_SCREENSHOTS:-$ROOT/build/test-artifacts/ui}
PASSED=0; FAILED=0
T=$(mktemp -d /var/tmp/cedana-ctl.XXXXXX)
chmod 755 "$T"
DAEMON_PID= CONTROLLER_PID=
PORT=18280
URL=http://127.0.0.1:$PORT
ADMIN=admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
LABEL=ctl-job
say() { printf '%s\n' "$*" >&2; }
pass() { PASSED=$((PASSED + 1)); say "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); say "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
wait_for() { local secs=$1; shift; local deadline=$((SECONDS + secs)); until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.5; done; }
api() { # api METHOD PATH [JSON]
  curl -fsS -X "$1" "$URL/v1$2" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
export -f api jq_py
export URL ADMIN
last_counter() { grep -o 'Counter: [0-9]*' "$1" 2>/dev/null | tail -n1 | grep -o '[0-9]*$'; }
counter_at_least() { local n; n=$(last_counter "$1"); [ -n "$n" ] && [ "$n" -ge "$2" ]; }
submit() { sbatch --parsable "$@" | cut -d';' -f1; }

CONFIG=/etc/cedana/config.json
[ -f "$CONFIG" ] && cp -p "$CONFIG" "$T/config.json.orig"
mkdir -p /etc/cedana
cat >"$CONFIG" <<JSON
{ "connection": { "url": "$URL/v1", "auth_token": "$ADMIN" },
  "checkpoint": { "dir": "$T/checkpoints", "work_dir": "$T/work", "keep": 20 },
  "daemon": { "state_dir": "$T/state", "log_file": "$T/daemon.log", "cluster_key_file": "$T/cluster.key" },
  "controller": { "listen": "127.0.0.1:$PORT", "web_dir": "$ROOT/web", "bundle_dir": "$T/bundles" },
  "db": { "url": "sqlite://$T/catalog.db" } }
JSON
chmod 600 "$CONFIG"
cleanup() {
  scancel --user=root 2>/dev/null
  sleep 1
  bash "$ROOT/tests/kill_workloads.sh" "$T/state"
  for p in "$CONTROLLER_PID" "$DAEMON_PID"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  "$CEDANA" slurm destroy --no-restart >/dev/null 2>&1
  cluster_stop
  if [ -f "$T/config.json.orig" ]; then cp -p "$T/config.json.orig" "$CONFIG"; else rm -f "$CONFIG"; fi
  rm -rf "$T"
}
trap cleanup EXIT

cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
"$CEDANA" daemon start >>"$T/daemon.out" 2>&1 &
DAEMON_PID=$!
wait_for 20 "$CEDANA" daemon status >/dev/null 2>&1 || { say "node daemon did not start"; cat "$T/daemon.out" >&2; exit 1; }
"$CEDANA" plugin install slurm slurm/wlm >/dev/null && "$CEDANA" slurm setup >/dev/null 2>&1 ||
  { say "plugin install / slurm setup failed"; exit 1; }
wait_for 30 bash -c "sinfo -h -n $CLUSTER_NODE -o %t | grep -qE 'idle|mix|alloc'"
"$CEDANA_SLURM" daemon >"$T/controller.log" 2>&1 &
CONTROLLER_PID=$!
wait_for 20 curl -fs -o /dev/null "$URL/v1/health" || { say "controller did not start"; cat "$T/controller.log" >&2; exit 1; }

cd "$T"
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
read -r -a times <<<"$(policy_checkpoints)"
if [ ${#times[@]} -ge 2 ]; then
  gap=$(( (times[0] - times[1]) / 1000 ))
  check "on schedule: 10 s apart or a little more (got ${gap} s)" test "$gap" -ge 9 -a "$gap" -le 20
fi
n=$(last_counter victim.out)
check "the job kept running through the policy's checkpoints" wait_for 10 counter_at_least victim.out $((n + 2))
check "still RUNNING in SLURM" bash -c "squeue -h -j $job -o %T | grep -q RUNNING"
ops_done() { api GET /operations | jq_py "all(o['state'] == 'done' for o in d if o['policy_id'] == $policy)" | grep -q True; }
check "the policy's operations finished as done" ops_done
check "checkpoints listed with job id and node" \
  bash -c "api GET '/checkpoints?label=$LABEL' | grep -q '\"job_id\":$job'"

# The web UI in headless Chromium, against this controller and job (its own policy on the label).
if [ -x /usr/bin/chromium ] && [ -d "$ROOT/tests/ui/node_modules/playwright-core" ]; then
  mkdir -p "$UI_SCREENSHOTS"
  CONTROLLER_URL=$URL ADMIN_TOKEN=$ADMIN UI_LABEL=$LABEL SCREENSHOT_DIR=$UI_SCREENSHOTS CHECKPOINT_WAIT_SECONDS=90 \
    node "$ROOT/tests/ui/ui_test.mjs" >"$T/ui.out" 2>&1
  ui=$?
  grep -E '^(PASS|FAIL)' "$T/ui.out" | sed 's/^/  ui: /' >&2
  check "web UI test in headless Chromium (screenshots in $UI_SCREENSHOTS)" test $ui = 0
  [ $ui = 0 ] || tail -5 "$T/ui.out" >&2
else
  fail "web UI test: needs /usr/bin/chromium and tests/ui/node_modules (scripts/setup.sh installs both)"
fi

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
  wait_for 40 grep -q "job $again (restart 0) resumed from checkpoint $sigterm_ck" victim.err
scancel "$again"

if [ "$FAILED" -gt 0 ]; then
  say "--- controller log ---"; tail -25 "$T/controller.log" >&2
  say "--- node daemon (agent, warnings) ---"; grep -E "agent|warn|error" "$T/daemon.log" | tail -15 >&2
  say "--- victim.err ---"; tail -10 victim.err >&2
fi
say ""
say "controller_slurm_test.sh: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
