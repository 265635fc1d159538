#!/usr/bin/env bash
# The main job: installs everything (scripts/setup.sh), starts a local single-node SLURM cluster
# (munge, slurmctld, slurmd; node compute-01 with the seeds' debug/high partitions), installs
# the plugins the seeds' way (`cedana plugin install slurm`, `cedana slurm setup`), and runs the
# seeds' preemption scenario: the victim is checkpointed when the preemptor takes its CPUs,
# requeued, and resumes from its checkpoint when the preemptor is cancelled.
# Everything it started is stopped at the end, and SLURM's files are put back.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '\033[36m$ %s\033[0m\n' "$*"; "$@"; }

bash "$ROOT/scripts/setup.sh"
source "$ROOT/tests/slurm/cluster.sh"
CEDANA=/usr/local/bin/cedana
WORK=$(mktemp -d /var/tmp/cedana-demo.XXXXXX)
chmod 755 "$WORK"
DAEMON_PID=
cleanup() {
  set +e
  scancel --user=root 2>/dev/null; sleep 1
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null
  "$CEDANA" slurm destroy --no-restart >/dev/null 2>&1
  cluster_stop
}
trap cleanup EXIT

bold "starting a local SLURM cluster (slurm.conf as in the seeds: PreemptMode=REQUEUE, debug GraceTime=15, high)"
cluster_start
sinfo
if ! "$CEDANA" daemon status >/dev/null 2>&1; then
  "$CEDANA" daemon start >>"$WORK/daemon.log" 2>&1 &
  DAEMON_PID=$!
  for _ in $(seq 50); do "$CEDANA" daemon status >/dev/null 2>&1 && break; sleep 0.2; done
fi
"$CEDANA" daemon status

bold "installing SLURM support"
run "$CEDANA" plugin install slurm
run "$CEDANA" slurm setup

bold "a fresh lineage: deleting what an earlier demo left under the label victim"
for id in $("$CEDANA" checkpoints --label victim --json | python3 -c 'import json, sys
for c in json.load(sys.stdin): print(c["id"])'); do
  run "$CEDANA" checkpoints delete "$id"
done

cd "$WORK"
cp "$ROOT/tests/slurm/victim.sbatch" "$ROOT/tests/slurm/preemptor.sbatch" .
bold "victim.sbatch (the seeds' file, word for word)"
cat victim.sbatch
bold "deploying the victim"
VICTIM=$(sbatch --parsable -p debug -w compute-01 victim.sbatch); echo "Submitted batch job $VICTIM"
until grep -q "Counter: 5" victim.out 2>/dev/null; do sleep 1; done
tail -n 3 victim.out

bold "deploying the preemptor on all $(nproc) CPUs of compute-01"
PREEMPTOR=$(sbatch --parsable -p high -w compute-01 --cpus-per-task="$(nproc)" preemptor.sbatch)
echo "Submitted batch job $PREEMPTOR"
until grep -q "taken on preemption" victim.err 2>/dev/null; do sleep 0.5; done
grep cedana: victim.err
AT=$(grep -o 'Counter: [0-9]*' victim.out | tail -n1)
echo "victim's last line at the checkpoint: $AT"
echo "waiting for SLURM to requeue the victim at the end of its grace time..."
until [ "$(squeue -h -j "$VICTIM" -o %T)" = PENDING ]; do sleep 1; done
squeue

bold "cancelling the preemptor; the victim runs again and resumes"
run scancel "$PREEMPTOR"
sleep 1
# A requeued job waits ~120 s (BeginTime) before it may run again; skip that for the demo.
run scontrol update jobid="$VICTIM" StartTime=now
until grep -q "resumed from checkpoint" victim.err 2>/dev/null; do sleep 0.5; done
sleep 4
squeue
echo "--- victim.err"; cat victim.err
# The seeds' preemptor writes to victim.out too (as a job without cedana it emptied the file when
# it started); the resumed victim appended its lines after the preemptor's.
echo "--- victim.out: the preemptor's lines, then the resumed victim's"; head -n 3 victim.out; echo ...; tail -n 3 victim.out
# The victim's first counter after the preemptor's 0..K, if the rest counts on from there.
FIRST=$(python3 - "${AT#Counter: }" <<'PY'
import re, sys
at = int(sys.argv[1])
n = [int(x) for x in re.findall(r"^Counter: (\d+)$", open("victim.out").read(), re.M)]
print(next((n[i] for i in range(len(n)) if n[:i] == list(range(i)) and n[i] in (at, at + 1)
            and n[i:] == list(range(n[i], n[i] + len(n) - i))), ""))
PY
)
if [ -n "$FIRST" ] && [ "$FIRST" -ge "${AT#Counter: }" ] && ! grep -q "Starting victim" victim.out; then
  bold "OK: preempted at '$AT', resumed at 'Counter: $FIRST': the victim went on from its checkpoint, not from 0"
else
  bold "FAILED: the victim did not resume from its checkpoint"; exit 1
fi
