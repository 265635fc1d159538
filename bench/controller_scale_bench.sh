#!/bin/bash
# The controller's own watchers at scale (docs/controller.md, "How it knows the cluster"): a real
# local cluster (tests/slurm/cluster.sh) holding JOBS jobs (held, so that they stay), a checkpoint
# dir holding CKPTS signed checkpoints (one real dump through a node daemon, copied under new ids
# and labels and signed again with the cluster key), and `cedana-slurm daemon` with its catalog
# in SQLite. Measured: the time until every checkpoint is indexed; over 60 s of watching,
# slurmctld's RPCs per second by type (sdiag), the controller's CPU, and the time of each job
# sync and index refresh (its debug log); the API's list latency, whole and paged. The same is
# measured with an empty cluster and checkpoint dir in the same run, as the baseline.
# Prints a Markdown section for BENCHMARKS.md.
# Usage: sudo bench/controller_scale_bench.sh [JOBS=1000] [CKPTS=10000]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
JOBS=${1:-1000}
CKPTS=${2:-10000}
source "$ROOT/tests/slurm/cluster.sh"
source "$ROOT/tests/slurm/checks.sh"
CEDANA=${CEDANA:-$ROOT/build/src/cli/cedana}
CEDANA_SLURM=${CEDANA_SLURM:-$ROOT/build/src/cedana_slurm/cedana-slurm}
T=$(mktemp -d /var/tmp/cedana-bench.XXXXXX)
chmod 755 "$T"
DAEMON_PID= CONTROLLER_PID=
export CEDANA_CONFIG=$T/config.json CEDANA_DAEMON_SOCKET=$T/cedana.sock CEDANA_DAEMON_STATE_DIR=$T/state
export CEDANA_CHECKPOINT_DIR=$T/checkpoints CEDANA_CHECKPOINT_WORK_DIR=$T/work CEDANA_CLUSTER_KEY_FILE=$T/cluster.key
export CEDANA_DAEMON_LOG_FILE=$T/daemon.log CEDANA_CHECKPOINT_KEEP=0
PORT=18280
URL=http://127.0.0.1:$PORT
ADMIN=admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
stop_controller() { [ -n "$CONTROLLER_PID" ] && kill "$CONTROLLER_PID" 2>/dev/null && wait "$CONTROLLER_PID" 2>/dev/null; CONTROLLER_PID=; }
cleanup() {
  stop_controller
  scancel --user=root 2>/dev/null
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
  cluster_stop
  rm -rf "$T"
}
trap cleanup EXIT
cluster_start || { say "cannot start the SLURM cluster"; exit 1; }

# One real checkpoint, from the node daemon.
"$CEDANA" daemon start >"$T/daemon.out" 2>&1 &
DAEMON_PID=$!
wait_for 20 "$CEDANA" daemon status >/dev/null 2>&1 || { say "node daemon did not start"; exit 1; }
w=$(COUNTER_SLEEP=0.2 "$CEDANA" run --label seed -- "$ROOT/tests/workloads/counter.sh" 2>/dev/null)
sleep 1
seed=$("$CEDANA" dump "$w" 2>/dev/null | tail -n1)
[ -n "$seed" ] || { say "the seed dump failed"; exit 1; }
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=

# copies N: N more checkpoints like the seed, 5 per label, each signed as the node daemon would.
copies() {
  python3 - "$CEDANA_CHECKPOINT_DIR/root/seed/$seed/manifest.json" "$CEDANA_CHECKPOINT_DIR" "$T/cluster.key" "$1" <<'PY'
import hashlib, hmac, json, os, sys
src, top, key_file, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
key = open(key_file).read().strip().encode()
m = json.load(open(src))
def sign(m):
    body = {k: v for k, v in m.items() if k != "mac"}
    return hmac.new(key, json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(),
                    hashlib.sha256).hexdigest()
if sign(m) != m["mac"]: sys.exit("cannot reproduce the seed's MAC: the copies would not be indexed")
for i in range(n):
    c = dict(m, id=f"20260101-000000-{i:08x}", label=f"bench-{i // 5}", created_at_ms=m["created_at_ms"] - i * 1000)
    c["mac"] = sign(c)
    d = os.path.join(top, c["owner"], c["label"], c["id"])
    os.makedirs(d)
    with open(os.path.join(d, "manifest.json"), "w") as f: json.dump(c, f)
PY
}
rpc_counts() { # every RPC type's count, as JSON
  sdiag 2>/dev/null | python3 -c "
import json, re, sys
text = sys.stdin.read().split('Remote Procedure Call statistics by message type')[1].split('Remote Procedure Call statistics by user')[0]
print(json.dumps({m[1]: int(m[2]) for m in re.finditer(r'(\w+)\s+\(\s*\d+\) count:(\d+)', text)}))"
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
all_indexed() { local n; n=$(indexed); [ -n "$n" ] && [ "$n" -ge "$1" ]; }
indexed() { curl -fsS "$URL/v1/checkpoints" -H "Authorization: Bearer $ADMIN" | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }
latency() { # median ms of 10 GETs of PATH
  python3 - "$URL$1" "$ADMIN" <<'PY'
import statistics, sys, time, urllib.request
ms = []
for _ in range(10):
    req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
    t = time.monotonic()
    with urllib.request.urlopen(req, timeout=60) as r: r.read()
    ms.append((time.monotonic() - t) * 1000)
print(f"{statistics.median(ms):.1f}")
PY
}
deep_cursor() { # the X-Next-After that leads to page 50 of checkpoints at 100 a page
  python3 - "$URL" "$ADMIN" <<'PY'
import sys, urllib.request
after = ""
for _ in range(49):
    req = urllib.request.Request(f"{sys.argv[1]}/v1/checkpoints?limit=100" + (f"&after={after}" if after else ""),
                                 headers={"Authorization": "Bearer " + sys.argv[2]})
    with urllib.request.urlopen(req, timeout=60) as r: after = r.headers.get("X-Next-After") or after
print(after)
PY
}

# round NAME: starts the controller on what is there now, measures, stops it; one JSON line.
round() {
  local name=$1 total started db=$T/catalog-$1.db
  rm -f "$db"*
  CEDANA_DB_URL=sqlite://$db CEDANA_CONTROLLER_LISTEN=127.0.0.1:$PORT CEDANA_AUTH_TOKEN=$ADMIN \
    CEDANA_CONTROLLER_WEB_DIR=$ROOT/web CEDANA_LOG_LEVEL=debug "$CEDANA_SLURM" daemon >"$T/$name.log" 2>&1 &
  CONTROLLER_PID=$!
  started=$(date +%s%3N)
  wait_for 30 curl -fs -o /dev/null "$URL/v1/health" || { say "controller did not start"; cat "$T/$name.log" >&2; exit 1; }
  total=$(find "$CEDANA_CHECKPOINT_DIR" -name manifest.json | wc -l)
  wait_for 600 all_indexed "$total" || say "$name: not everything was indexed"
  local index_ms=$(($(date +%s%3N) - started))
  sleep 10  # past the first full syncs
  local lines; lines=$(wc -l <"$T/$name.log")
  local rpc0 cpu0; rpc0=$(rpc_counts); cpu0=$(cpu_ticks "$CONTROLLER_PID")
  sleep 60
  local rpc1 cpu1; rpc1=$(rpc_counts); cpu1=$(cpu_ticks "$CONTROLLER_PID")
  local deep; deep=$(deep_cursor)
  local l_all l_page l_deep l_jobs l_jobs_page
  l_all=$(latency /v1/checkpoints); l_page=$(latency "/v1/checkpoints?limit=100")
  l_deep=$(latency "/v1/checkpoints?limit=100&after=$deep"); l_jobs=$(latency /v1/jobs)
  l_jobs_page=$(latency "/v1/jobs?limit=100")
  tail -n +"$((lines + 1))" "$T/$name.log" >"$T/$name.steady.log"
  stop_controller
  python3 - "$name" "$total" "$index_ms" "$rpc0" "$rpc1" "$((cpu1 - cpu0))" "$(getconf CLK_TCK)" "$T/$name.steady.log" \
    "$l_all $l_page $l_deep $l_jobs $l_jobs_page" "$(squeue -h | wc -l)" <<'PY'
import json, re, statistics, sys
name, total, index_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r0, r1 = json.loads(sys.argv[4]), json.loads(sys.argv[5])
rpcs = {k: (r1.get(k, 0) - r0.get(k, 0)) / 60 for k in r1 if r1.get(k, 0) != r0.get(k, 0)}
took = {}
for line in open(sys.argv[8]):
    m = re.search(r"watch: (\w+) took (\d+) ms", line)
    if m: took.setdefault(m[1], []).append(int(m[2]))
lat = sys.argv[9].split()
print(json.dumps({"name": name, "checkpoints": total, "jobs": int(sys.argv[10]), "index_ms": index_ms,
                  "rpcs": rpcs, "cpu_pct": 100 * int(sys.argv[6]) / int(sys.argv[7]) / 60,
                  "took_p50": {k: statistics.median(v) for k, v in took.items()},
                  "took_max": {k: max(v) for k, v in took.items()},
                  "latency_ms": dict(zip(["checkpoints", "checkpoints?limit=100", "page 50", "jobs", "jobs?limit=100"], lat))}))
PY
}

results=$T/results.jsonl
round empty >>"$results"
copies "$CKPTS"
for ((j = 0; j < JOBS; j++)); do sbatch --hold -p debug -o /dev/null --wrap "sleep 600" >/dev/null || break; done
round "jobs$JOBS-checkpoints$CKPTS" >>"$results"
python3 - "$results" "$JOBS" "$CKPTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("## The controller at scale\n")
print(f"Measured with `sudo bench/controller_scale_bench.sh {sys.argv[2]} {sys.argv[3]}`: `cedana-slurm daemon` "
      "(SQLite catalog) watching the local cluster and a local checkpoint dir, first empty (the baseline), then "
      "with held jobs and signed checkpoints. RPCs per second over 60 s of watching (sdiag); the watchers' pass "
      "times from the controller's debug log (median / longest); API latency: median of 10 GETs.\n")
print("| | jobs | checkpoints | all indexed after | slurmctld RPCs/s | controller CPU | job sync | index refresh | GET checkpoints: all / 100 / page 50 | GET jobs: all / 100 |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    rpcs = ", ".join(f"{k} {v:.2f}" for k, v in sorted(r["rpcs"].items())) or "0"
    t50, tmax, l = r["took_p50"], r["took_max"], r["latency_ms"]
    def took(k): return f"{t50[k]:.0f} / {tmax[k]} ms" if k in t50 else "n/a"
    print(f"| {r['name']} | {r['jobs']} | {r['checkpoints']} | {r['index_ms'] / 1000:.1f} s | {rpcs} | {r['cpu_pct']:.1f} % "
          f"| {took('jobs')} | {took('index')} | {l['checkpoints']} / {l['checkpoints?limit=100']} / {l['page 50']} ms "
          f"| {l['jobs']} / {l['jobs?limit=100']} ms |")
PY
