#!/bin/bash
# One preemption hitting many enabled jobs on one node (docs/slurm.md, "Many jobs on a node"),
# on a real local cluster (tests/slurm/cluster.sh) whose node declares CPUS CPUs so that N
# one-CPU jobs fit on this small machine. For each round: N jobs (the seeds' victim, each its own
# label) run; over 20 s, slurmctld's RPCs (sdiag) and the CPU and memory of the job proxies and
# the node daemon are measured; then one job of the high partition takes every CPU and preempts
# them all (GraceTime 15 s). From the node daemon's log: each dump's arrival (its line's time
# minus its total and its wait for a slot), start and end; "detection" is PreemptTime (whole
# seconds, so up to 1 s early) to arrival, "all checkpointed" PreemptTime to the last end.
# Rounds: the notice (SIGUSR1, the default) with the daemon's dump queue at its default and,
# in the same run, the baselines: per-job polling (a job with a --signal of its own gets no
# notice), and the queue set to 1 (one by one) and to 256 (everything at once).
# Prints a Markdown section for BENCHMARKS.md.
# Usage: sudo [SLOT_BASELINES="1 256"] bench/slurm_scale_bench.sh [SIZES="1 50 200"] [CPUS=256] [BASELINE_N=50]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SIZES=${1:-1 50 200}
export CLUSTER_CPUS=${2:-256}
BASELINE_N=${3:-50}
source "$ROOT/tests/slurm/cluster.sh"
source "$ROOT/tests/slurm/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
refuse_other_node_daemon
T=$(mktemp -d /var/tmp/cedana-bench.XXXXXX)
chmod 755 "$T"
DAEMON_PID=
use_node_config
trap 'end_node_suite; rm -rf "$T"' EXIT
cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
start_node_daemon "$T/daemon.out" || { say "cannot start the node daemon"; exit 1; }
install_cedana_slurm || { say "cedana slurm setup failed"; exit 1; }
cd "$T"
cp "$ROOT/tests/slurm/victim.sbatch" "$ROOT/tests/slurm/preemptor.sbatch" .

rpc_counts() { # "<job-info single> <all RPCs>"
  sdiag 2>/dev/null | python3 -c "
import re, sys
text = sys.stdin.read().split('Remote Procedure Call statistics by message type')[1].split('Remote Procedure Call statistics by user')[0]
counts = {m[1]: int(m[2]) for m in re.finditer(r'(\w+)\s+\(\s*\d+\) count:(\d+)', text)}
print(counts.get('REQUEST_JOB_INFO_SINGLE', 0), sum(counts.values()))"
}
proxy_pids() { for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = /usr/local/bin/cedana-slurm ] && echo "${p#/proc/}"; done; }
cpu_ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
rss_kib() { local t=0 p; for p in "$@"; do t=$((t + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done; echo $t; }
restart_daemon() { kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; start_node_daemon "$T/daemon.out" "$@" || { say "cannot restart the node daemon"; exit 1; }; }

# round NAME N MODE SLOTS: prints one JSON line of measurements.
round() {
  local name=$1 n=$2 mode=$3 slots=$4 extra=() jobs=() j
  [ "$mode" = polling ] && extra=(--signal=B:URG@0)  # ignored by the proxy and the script
  restart_daemon CEDANA_CHECKPOINT_PARALLEL_DUMPS="$slots"
  mkdir -p "$name"
  for ((j = 0; j < n; j++)); do
    jobs+=("$(submit -p debug -c 1 "${extra[@]}" -o "$name/$j.out" -e "$name/$j.err" \
      --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=$name-$j victim.sbatch)")
  done
  for ((j = 0; j < n; j++)); do wait_for 300 counter_at_least "$name/$j.out" 1 || say "$name: job $j did not start"; done
  sleep 5  # past the proxies' start
  local proxies; proxies=$(proxy_pids)
  local hz; hz=$(getconf CLK_TCK)
  read -r info0 all0 < <(rpc_counts)
  local pcpu0 dcpu0; pcpu0=$(cpu_ticks $proxies); dcpu0=$(cpu_ticks "$DAEMON_PID")
  sleep 20
  read -r info1 all1 < <(rpc_counts)
  local pcpu1 dcpu1; pcpu1=$(cpu_ticks $proxies); dcpu1=$(cpu_ticks "$DAEMON_PID")
  local prss drss; prss=$(rss_kib $proxies); drss=$(rss_kib "$DAEMON_PID")
  local lines; lines=$(wc -l <"$T/daemon.log")
  local p; p=$(submit -p high -w "$CLUSTER_NODE" -c "$CLUSTER_CPUS" -o /dev/null -e /dev/null preemptor.sbatch)
  wait_for 60 bash -c "grep -lq 'taken on preemption\|checkpoint on preemption failed' $name/*.err 2>/dev/null"
  scontrol -o show job >"$name/jobs.txt"  # PreemptTime, before the requeues reset it
  read -r info2 all2 < <(rpc_counts)
  local t2=$SECONDS
  wait_for 120 bash -c "[ \$(grep -l 'taken on preemption\|checkpoint on preemption failed\|checkpoint refused' $name/*.err 2>/dev/null | wc -l) -ge $n ]"
  wait_for 120 bash -c "[ -z \"\$(squeue -h -t R -p debug)\" ]"
  read -r info3 all3 < <(rpc_counts)
  local t3=$SECONDS
  tail -n +"$((lines + 1))" "$T/daemon.log" >"$name/daemon.log"
  scancel "${jobs[@]}" "$p"
  wait_for 300 bash -c "[ -z \"\$(squeue -h)\" ]"
  python3 - "$name" "$n" "$mode" "$slots" "$info0 $all0 $info1 $all1 $info2 $all2 $info3 $all3 $((t3 - t2))" \
    "$pcpu0 $pcpu1 $dcpu0 $dcpu1 $hz $prss $drss $(wc -w <<<"$proxies")" <<'PY'
import glob, json, re, statistics, sys
from datetime import datetime, timezone
name, n, mode, slots = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
i0, a0, i1, a1, i2, a2, i3, a3, during_s = map(int, sys.argv[5].split())
pc0, pc1, dc0, dc1, hz, prss, drss, nproxies = map(int, sys.argv[6].split())
preempt = {}  # label -> PreemptTime (s)
for line in open(f"{name}/jobs.txt"):
    pt = re.search(r"PreemptTime=(\S+)", line)
    out = re.search(r"StdOut=\S*/" + re.escape(name) + r"/(\d+)\.out", line)
    if out and pt and pt[1] not in ("None", "Unknown"):
        t = datetime.strptime(pt[1], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
        preempt[f"{name}-{out[1]}"] = t
def ms(ts): return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
detect, ends, starts, intervals = [], [], {}, []
for line in open(f"{name}/daemon.log"):
    m = re.match(r"(\S+) info  dump: checkpoint \S+ of pid \d+ \(label (\S+),.*?(?:waited (\d+) ms for a slot, )?dump \d+ ms, total (\d+) ms", line)
    if not m or m[2] not in preempt: continue
    end = ms(m[1]); start = end - int(m[4]) / 1000; arrival = start - int(m[3] or 0) / 1000
    detect.append(arrival - preempt[m[2]]); ends.append(end - preempt[m[2]]); intervals.append((start, end))
# Most dumps at once, from the intervals.
events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
most = cur = 0
for _, d in events: cur += d; most = max(most, cur)
failed = sum(1 for f in glob.glob(f"{name}/*.err") if re.search("checkpoint on preemption failed|checkpoint refused", open(f).read()))
def pct(v, q): return sorted(v)[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
print(json.dumps({
    "name": name, "n": n, "mode": mode, "slots": slots,
    "rpc_info_s": (i1 - i0) / 20, "rpc_all_s": (a1 - a0) / 20,
    "rpc_info_s_during": (i3 - i2) / max(1, during_s), "rpc_all_s_during": (a3 - a2) / max(1, during_s),
    "detect_p50": pct(detect, 0.5), "detect_p99": pct(detect, 0.99),
    "all_done_s": max(ends) if ends else float("nan"), "checkpointed": len(ends), "failed": failed,
    "most_at_once": most,
    "proxy_cpu_pct_per_job": 100 * (pc1 - pc0) / hz / 20 / max(1, nproxies),
    "daemon_cpu_pct_per_job": 100 * (dc1 - dc0) / hz / 20 / n,
    "proxy_rss_mib_per_job": prss / 1024 / max(1, nproxies), "daemon_rss_mib": drss / 1024}))
PY
}

results=$T/results.jsonl
for n in $SIZES; do round "notice-$n" "$n" notice 0 >>"$results"; done
round "polling-$BASELINE_N" "$BASELINE_N" polling 0 >>"$results"
for slots in ${SLOT_BASELINES-1 256}; do round "slots$slots-$BASELINE_N" "$BASELINE_N" notice "$slots" >>"$results"; done
python3 - "$results" "$SIZES" "$CLUSTER_CPUS" "$(nproc)" "$BASELINE_N" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("## Many jobs on a node (SLURM)\n")
print(f"Measured with `sudo bench/slurm_scale_bench.sh \"{sys.argv[2]}\" {sys.argv[3]} {sys.argv[5]}` on the local cluster "
      f"({sys.argv[4]} real cores, the node declaring {sys.argv[3]} CPUs): N of the seeds' victims, each its own label, "
      "then one job taking every CPU preempts them all (GraceTime 15 s). Detection: PreemptTime (whole seconds, "
      "so up to 1 s early) to the dump request reaching the node daemon; all checkpointed: PreemptTime to the last "
      "dump's end. CPU in % of one core per job over 20 s of running.\n")
print("| round | N | slurmctld job-info RPCs/s (all RPCs/s) running | during the preemption | detection p50 / p99 | all checkpointed | checkpointed / failed | most dumps at once | proxy CPU, RSS per job | daemon CPU per job, RSS |")
print("|---|---|---|---|---|---|---|---|---|---|")
label = {"notice": "SLURM's notice, dump queue at its default", "polling": "baseline: each proxy polls slurmctld"}
for r in rows:
    what = label[r["mode"]] if r["slots"] == "0" else f"baseline: {r['slots']} dump(s) at once"
    print(f"| {what} | {r['n']} | {r['rpc_info_s']:.2f} ({r['rpc_all_s']:.2f}) | {r['rpc_info_s_during']:.2f} ({r['rpc_all_s_during']:.2f}) "
          f"| {r['detect_p50']:.2f} / {r['detect_p99']:.2f} s | {r['all_done_s']:.1f} s | {r['checkpointed']} / {r['failed']} | {r['most_at_once']} "
          f"| {r['proxy_cpu_pct_per_job']:.2f} %, {r['proxy_rss_mib_per_job']:.1f} MiB | {r['daemon_cpu_pct_per_job']:.2f} %, {r['daemon_rss_mib']:.0f} MiB |")
PY
