#!/bin/bash
# How much noticing a preemption costs slurmctld, and how fast it is (docs/slurm.md, "Noticing a
# preemption"), on a real local cluster (tests/slurm/cluster.sh) with cedana set up as the seeds
# do. Two kinds of enabled jobs, measured in the same run:
#   notice  - as job_submit/cedana submits them: SLURM signals the proxy at preemption
#   polling - with a --signal of their own (so no notice): the proxy asks slurmctld every 0.5 s
# For each: slurmctld's job-info RPCs per second while JOBS such jobs run (sdiag), and the time
# from the job's PreemptTime (whole seconds, so +-0.5 s) to the start of its checkpoint (the
# node daemon's log), over ROUNDS preemptions. Prints a Markdown section for BENCHMARKS.md.
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

job_info_rpcs() { sdiag 2>/dev/null | awk '/REQUEST_JOB_INFO_SINGLE/ {gsub(/[^0-9]/, "", $NF); print $NF; exit}'; }
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

# latencies MODE: PreemptTime -> checkpoint start (ms), one line per round.
latencies() {
  local extra=() v p r pt start
  [ "$1" = polling ] && extra=(--signal=B:URG@0)  # ignored by the proxy and the script
  for ((r = 0; r < ROUNDS; r++)); do
    rm -f victim.out victim.err
    v=$(submit -p debug -w "$CLUSTER_NODE" "${extra[@]}" --export=ALL,CEDANA_CHECKPOINT=lat-$1-$r victim.sbatch)
    wait_job_state "$v" RUNNING 60; wait_for 30 counter_at_least victim.out 3
    local lines; lines=$(wc -l <"$T/daemon.log")
    p=$(submit -p high -w "$CLUSTER_NODE" --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
    wait_for 30 grep -q "taken on preemption" victim.err
    pt=$(scontrol show job "$v" | grep -o 'PreemptTime=[0-9T:-]*' | cut -d= -f2)
    # The dump's first line in the daemon's log ("dump: ..." or the checkpoint's own line).
    start=$(tail -n +"$((lines + 1))" "$T/daemon.log" | grep -m1 -E ' dump: ' | awk '{print $1}')
    [ -n "$pt" ] && [ -n "$start" ] && echo $(($(ms_of "$start") - $(ms_of "$pt")))
    scancel "$p" "$v"; wait_for 60 bash -c "[ -z \"\$(squeue -h -j $v,$p)\" ]"
  done
}

declare -A RATE LAT
for mode in notice polling; do
  RATE[$mode]=$(rpc_rate $mode)
  LAT[$mode]=$(latencies $mode | sort -n | tr '\n' ' ')
done
median() { python3 -c "import statistics,sys; v=[int(x) for x in sys.argv[1:]]; print(f'{statistics.median(v)/1000:.2f} s (min {min(v)/1000:.2f}, max {max(v)/1000:.2f})' if v else 'n/a')" $1; }
cat <<MD
## Noticing a preemption (SLURM)

Measured $(date -u '+%Y-%m-%d %H:%M UTC') with \`sudo bench/slurm_detection_bench.sh $JOBS $ROUNDS\`: $JOBS enabled jobs running, $ROUNDS preemptions per mode.

| | slurmctld job-info RPCs/s with $JOBS jobs | per job | PreemptTime -> checkpoint start (median of $ROUNDS, +-0.5 s) |
|---|---|---|---|
| SLURM's notice (SIGUSR1, default) | ${RATE[notice]} | $(python3 -c "print(f'{${RATE[notice]} / $JOBS:.2f}')") | $(median "${LAT[notice]}") |
| polling (a job with its own --signal) | ${RATE[polling]} | $(python3 -c "print(f'{${RATE[polling]} / $JOBS:.2f}')") | $(median "${LAT[polling]}") |
MD
