# Shared by the tests that run the controller against the real SLURM cluster
# (tests/slurm/cluster.sh): starts the cluster, a node daemon reporting to the controller, the
# plugins (`cedana plugin install slurm` + `cedana slurm setup`) and `cedana-slurm daemon`, with
# a temporary /etc/cedana/config.json; everything is stopped and put back on exit. Provides
# check/pass/fail, wait_for, api (REST calls with the admin token), jq_py, submit and the
# counter helpers. Source it; it leaves the shell in $T.
#
# Variables: CEDANA, CEDANA_SLURM (binaries), UI_SCREENSHOTS (where browser tests put PNGs).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
CEDANA_SLURM=${CEDANA_SLURM:-/usr/local/bin/cedana-slurm}
UI_SCREENSHOTS=${UI_SCREENSHOTS:-$ROOT/build/test-artifacts/ui}
refuse_other_node_daemon
T=$(mktemp -d /var/tmp/cedana-ctl.XXXXXX)
chmod 755 "$T"
DAEMON_PID= CONTROLLER_PID=
PORT=18280
HOST_ADDR=127.0.0.1
[ "${CLUSTER_NODES:-1}" = 2 ] && HOST_ADDR=10.77.0.1  # reachable from compute-02's namespace
URL=http://$HOST_ADDR:$PORT
ADMIN=admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
api() { # api METHOD PATH [JSON]
  curl -fsS -X "$1" "$URL/v1$2" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
export -f api jq_py
export URL ADMIN

CONFIG=/etc/cedana/config.json
[ -f "$CONFIG" ] && cp -p "$CONFIG" "$T/config.json.orig"
mkdir -p /etc/cedana
cat >"$CONFIG" <<JSON
{ "connection": { "url": "$URL/v1", "auth_token": "$ADMIN" },
  "checkpoint": { "dir": "$T/checkpoints", "work_dir": "$T/work", "keep": 20 },
  "daemon": { "state_dir": "$T/state", "log_file": "$T/daemon.log", "cluster_key_file": "$T/cluster.key" },
  "controller": { "listen": "$HOST_ADDR:$PORT", "web_dir": "$ROOT/web", "bundle_dir": "$T/bundles" },
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
  chattr -R -i "$T" 2>/dev/null  # a test may have made a dir immutable to fail the storage
  rm -rf "$T"
  say_failed_checks
}
trap cleanup EXIT

cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
start_node_daemon "$T/daemon.out" || { say "node daemon did not start"; cat "$T/daemon.out" >&2; exit 1; }
install_cedana_slurm || { say "plugin install / slurm setup failed"; exit 1; }
"$CEDANA_SLURM" daemon >"$T/controller.log" 2>&1 &
CONTROLLER_PID=$!
wait_for 20 curl -fs -o /dev/null "$URL/v1/health" || { say "controller did not start"; cat "$T/controller.log" >&2; exit 1; }
if [ "${CLUSTER_NODES:-1}" = 2 ]; then
  # compute-02's node daemon: its own state, work dir, log and name; the same checkpoint dir
  # (shared storage), cluster key and controller.
  sed -e "s|\"state_dir\": \"$T/state\"|\"state_dir\": \"$CLUSTER_NODE_B_DIR/state\"|" \
      -e "s|\"log_file\": \"$T/daemon.log\"|\"log_file\": \"$T/daemon-b.log\", \"node_name\": \"$CLUSTER_NODE_B\"|" \
      -e "s|\"work_dir\": \"$T/work\"|\"work_dir\": \"$T/work-b\"|" "$CONFIG" >"$T/config-b.json"
  cluster_start_node_b "$T/config-b.json" || { say "cannot start compute-02"; exit 1; }
fi

cd "$T"
