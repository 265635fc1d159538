#!/bin/bash
# How much noticing a preemption costs slurmctld, and how fast it is (docs/slurm.md, "Noticing a
# preemption"), on a real local cluster (tests/slurm/cluster.sh) with cedana set up as the seeds
# do. Two kinds of enabled jobs, measured in the same run:
#   notice  - as job_submit/cedana submits them: SLURM signals the proxy at preemption
#   polling - with a --signal of their own (so no notice): the proxy asks slurmctld every 0.5 s
# For each: slurmctld's job-info RPCs per second while JOBS such jobs run (sdiag), and, over
# ROUNDS preemptions, the time from the preemptor's submission (ms) and from the victim's
# PreemptTime (whole seconds, so up to 1 s early) to the start of its checkpoint (the node
# daemon's log: the checkpoint's line minus its total). Prints a Markdown section for
# BENCHMARKS.md.
# Usage: sudo bench/slurm_detection_bench.sh [JOBS=2] [ROUNDS=3]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
source "$ROOT/tests/slurm/cluster.sh"
source "$ROOT/tests/slurm/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
JOBS=${1:-2}
ROUNDS=${2:-3}
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

job_info_rpcs() { sdiag 2>/dev/null | grep -m1 'REQUEST_JOB_INFO_SINGLE' | grep -o 'count:[0-9]*' | cut -d: -f2; }
submit() { sbatch --parsable "$@" | cut -d';' -f1; }
ms_of() { date -u -d "$1" +%s%3N; }  # "2026-12-01T15:43:52.520Z" or "2026-12-01T15:43:52"

# rpc_rate MODE: RPCs per second over 20 s with JOBS jobs of MODE running.
rpc_rate() {
  local extra=() jobs=() j before after
  [ "$1" = polling ] && extra=(--signal=B:URG@0)  # ignored by the proxy and the script
  for ((j = 0; j < JOBS; j++)); do
    jobs+=("$(submit -p debug -c 1 "${extra[@]}" -o "rate$j.out" -e "rate$j.err" \
      --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=rate-$1-$j victim.sbatch)")
  done
  for j in "${jobs[@]}"; do wait_job_state "$j" RUNNING 60; done
  sleep 5  # past the proxies' start
  before=$(job_info_rpcs); sleep 20; after=$(job_info_rpcs)
  scancel "${jobs[@]}"; for j in "${jobs[@]}"; do wait_for 60 bash -c "[ -z \"\$(squeue -h -j $j)\" ]"; done
  python3 -c "print(f'{($after - $before) / 20:.2f}')"
}

# latencies MODE: one line per round: "<submit->start ms> <PreemptTime->start ms>".
latencies() {
  local extra=() v p r pt line start submitted lines
  [ "$1" = polling ] && extra=(--signal=B:URG@0)  # ignored by the proxy and the script
  for ((r = 0; r < ROUNDS; r++)); do
    rm -f victim.out victim.err
    v=$(submit -p debug -w "$CLUSTER_NODE" "${extra[@]}" --export=ALL,CEDANA_CHECKPOINT=lat-$1-$r victim.sbatch)
    wait_job_state "$v" RUNNING 60; wait_for 30 counter_at_least victim.out 3
    lines=$(wc -l <"$T/daemon.log")
    submitted=$(date +%s%3N)
    p=$(submit -p high -w "$CLUSTER_NODE" --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
    wait_for 30 grep -q "taken on preemption" victim.err
    pt=$(scontrol show job "$v" | grep -o 'PreemptTime=[0-9T:-]*' | cut -d= -f2)
    # "2026-...Z info  dump: checkpoint ID of pid P (label L, ... total 112 ms)"
    line=$(tail -n +"$((lines + 1))" "$T/daemon.log" | grep -m1 ' dump: checkpoint .* total [0-9]* ms')
    start=$(($(ms_of "$(awk '{print $1}' <<<"$line")") - $(grep -o 'total [0-9]*' <<<"$line" | awk '{print $2}')))
    [ -n "$pt" ] && [ -n "$line" ] && echo "$((start - submitted)) $((start - $(ms_of "$pt")))"
    scancel "$p" "$v"; wait_for 60 bash -c "[ -z \"\$(squeue -h -j $v,$p)\" ]"
  done
}

declare -A RATE SUB PRE
for mode in notice polling; do
  RATE[$mode]=$(rpc_rate $mode)
  lat=$(latencies $mode)
  SUB[$mode]=$(awk '{print $1}' <<<"$lat" | tr '\n' ' ')
  PRE[$mode]=$(awk '{print $2}' <<<"$lat" | tr '\n' ' ')
done
median() { python3 -c "import statistics,sys; v=[int(x) for x in sys.argv[1:]]; print(f'{statistics.median(v)/1000:.2f} s ({min(v)/1000:.2f}-{max(v)/1000:.2f})' if v else 'n/a')" $1; }
per_job() { python3 -c "print(f'{$1 / $JOBS:.2f}')"; }
cat <<MD
## Noticing a preemption (SLURM)

Measured $(date -u '+%Y-%m-%d %H:%M UTC') with \`sudo bench/slurm_detection_bench.sh $JOBS $ROUNDS\` on the local cluster: $JOBS enabled jobs running for the RPC rate, $ROUNDS preemptions per mode, medians (min-max). "Polling" is a job with a \`--signal\` of its own, which gets no notice.

| | slurmctld job-info RPCs/s with $JOBS jobs | per job | preemptor submitted -> checkpoint starts | PreemptTime (whole s) -> checkpoint starts |
|---|---|---|---|---|
| SLURM's notice (SIGUSR1, the default) | ${RATE[notice]} | $(per_job "${RATE[notice]}") | $(median "${SUB[notice]}") | $(median "${PRE[notice]}") |
| polling twice a second | ${RATE[polling]} | $(per_job "${RATE[polling]}") | $(median "${SUB[polling]}") | $(median "${PRE[polling]}") |
MD
