#!/bin/bash
# What cedana adds to each srun of an enabled batch script (docs/architecture.md, "srun steps"),
# on a real local cluster (tests/slurm/cluster.sh) with cedana set up as the seeds do. The same
# batch script runs N steps of `srun true` and N of `srun -n2 true`, timing each loop inside the
# script, once without cedana and once with CEDANA_ENABLE=1, ROUNDS times alternating. Prints a
# Markdown section for BENCHMARKS.md: milliseconds per srun, medians (min-max) of the rounds.
# Usage: sudo bench/srun_bench.sh [N=20] [ROUNDS=3]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
source "$ROOT/tests/slurm/cluster.sh"
source "$ROOT/tests/slurm/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
N=${1:-20}
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

# The batch script: each loop's time per srun, in ms, as "<what> <ms>" lines.
cat >steps.sbatch <<JOB
#!/bin/bash
#SBATCH -n2
per_srun() { local t0=\$(date +%s%N); for _ in \$(seq $N); do "\$@" >/dev/null; done; echo "\$(( (\$(date +%s%N) - t0) / $N / 1000 ))"; }
echo "one \$(per_srun srun -n1 true)"
echo "two \$(per_srun srun -n2 true)"
JOB

# run ENABLED ROUND: the script's lines ("one <us>", "two <us>") without or with cedana.
run() {
  local out="r$1-$2.out" export=ALL
  [ "$1" = 1 ] && export=ALL,CEDANA_ENABLE=1
  local j; j=$(submit --export="$export" -o "$out" -e "r$1-$2.err" steps.sbatch)
  wait_for 600 bash -c "[ -z \"\$(squeue -h -j $j)\" ]" || { say "job $j did not end"; return 1; }
  cat "$out"
}
for ((r = 0; r < ROUNDS; r++)); do
  run 0 "$r" | sed 's/^/plain /' >>times.txt
  run 1 "$r" | sed 's/^/enabled /' >>times.txt
done
grep -q '^enabled one' times.txt && grep -q 'started under cedana' r1-0.err ||
  { say "the enabled job did not run under cedana: $(head -3 r1-0.err)"; exit 1; }

python3 - "$N" "$ROUNDS" times.txt <<'PY'
import statistics, sys, time
n, rounds, path = sys.argv[1], sys.argv[2], sys.argv[3]
t = {}
for line in open(path):
    mode, what, us = line.split()
    t.setdefault((mode, what), []).append(int(us) / 1000)
def cell(v): return f"{statistics.median(v):.0f} ms ({min(v):.0f}-{max(v):.0f})"
print(f"## srun in an enabled job (SLURM)\n")
print(f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `sudo bench/srun_bench.sh {n} {rounds}` on the local cluster: "
      f"{n} sruns per loop inside one batch script, timed by the script, without cedana and with "
      f"`CEDANA_ENABLE=1` alternately, {rounds} rounds; medians (min-max).\n")
print("| step | without cedana, per srun | with cedana, per srun | added per srun | ratio |")
print("|---|---|---|---|---|")
for what, label in (("one", "`srun -n1 true`"), ("two", "`srun -n2 true`")):
    p, e = t[("plain", what)], t[("enabled", what)]
    mp, me = statistics.median(p), statistics.median(e)
    print(f"| {label} | {cell(p)} | {cell(e)} | {me - mp:.0f} ms | {me / mp:.2f} |")
PY
