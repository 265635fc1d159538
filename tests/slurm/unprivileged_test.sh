#!/bin/bash
# Unprivileged mode on the real SLURM cluster, as the seeds set it up: the config comes from
# `CEDANA_SLURM_UNPRIVILEGED=1 cedana version --init-config`, `cedana slurm setup` gives criu,
# cedana and cedana-slurm the seeds' capabilities, and a real non-root user's job is
# checkpointed on preemption and restored on requeue, CRIU running as that user both times,
# with the checkpoint dir where root cannot write (an idmapped mount that maps only the job
# users: the stand-in for NFS with root_squash). Another user sees none of it.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
refuse_other_node_daemon
T=$(mktemp -d /var/tmp/cedana-unpriv.XXXXXX)
chmod 755 "$T"
DAEMON_PID=
ALICE=cedana-alice BOB=cedana-bob
for u in "$ALICE" "$BOB"; do id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$u"; done

CONFIG=/etc/cedana/config.json
[ -f "$CONFIG" ] && cp -p "$CONFIG" "$T/config.json.orig"
CRIU=$(readlink -f /usr/local/bin/criu)
cleanup() {
  scancel --user="$ALICE" 2>/dev/null; scancel --user=root 2>/dev/null
  sleep 1
  bash "$ROOT/tests/kill_workloads.sh" "$T/state"
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
  "$CEDANA" slurm destroy --no-restart >/dev/null 2>&1
  cluster_stop
  umount "$T/checkpoints" 2>/dev/null
  if [ -f "$T/config.json.orig" ]; then cp -p "$T/config.json.orig" "$CONFIG"; else rm -f "$CONFIG"; fi
  rm -rf "$T"
  say_failed_checks
}
trap cleanup EXIT

# --- the seeds' set-up for unprivileged mode -------------------------------------------------
mkdir -p "$T/export" "$T/checkpoints"
for u in "$ALICE" "$BOB"; do install -d -m 0700 -o "$u" -g "$(id -gn "$u")" "$T/export/$u"; done
/usr/bin/python3 "$ROOT/tests/tools/idmapped_mount.py" "$T/export" "$T/checkpoints" \
  "$(id -u "$ALICE"),$(id -u "$BOB")" "$(id -g "$ALICE"),$(id -g "$BOB")" || { say "idmapped mount failed"; exit 1; }
check "root cannot create files in the checkpoint dir (root_squash stand-in)" \
  bash -c "! touch '$T/checkpoints/$ALICE/by-root' 2>/dev/null"
rm -f "$CONFIG"
check "CEDANA_SLURM_UNPRIVILEGED=1 cedana version --init-config" \
  env CEDANA_SLURM_UNPRIVILEGED=1 CEDANA_CHECKPOINT_DIR="$T/checkpoints" CEDANA_CHECKPOINT_WORK_DIR="$T/work" \
  CEDANA_DAEMON_STATE_DIR="$T/state" CEDANA_DAEMON_LOG_FILE="$T/daemon.log" CEDANA_CLUSTER_KEY_FILE="$T/cluster.key" \
  "$CEDANA" version --init-config
check "the config says unprivileged" bash -c "'$CEDANA' config show | grep -qE '^slurm.unprivileged +1 '"

cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
start_node_daemon "$T/daemon.out" || { say "node daemon did not start"; cat "$T/daemon.out" >&2; exit 1; }
"$CEDANA" plugin install slurm slurm/wlm >/dev/null || { say "plugin install failed"; exit 1; }
check "cedana slurm setup" "$CEDANA" slurm setup
check "the cluster is back up after setup" wait_for 30 bash -c "sinfo -h -n $CLUSTER_NODE -o %t | grep -qE 'idle|mix|alloc'"
caps="cap_dac_read_search,cap_sys_ptrace,cap_checkpoint_restore=eip"
for bin in "$CRIU" /usr/local/bin/cedana /usr/local/bin/cedana-slurm; do
  check "setup gave $bin the seeds' capabilities" bash -c "getcap '$bin' | grep -q '$caps'"
done

# --- alice's job: preempted, checkpointed as alice, requeued, restored as alice -------------
install -d -m 0755 -o "$ALICE" "$T/alice"
cat >"$T/alice/victim.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --job-name=victim
#SBATCH --output=victim.out
#SBATCH --error=victim.err
#SBATCH --time=00:10:00
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=alice-victim
echo "Starting victim job on $(hostname) as $(id -un)..."
echo "env: LD_LIBRARY_PATH=$LD_LIBRARY_PATH TMPDIR=$TMPDIR"
for i in {0..600}; do
    echo "Counter: $i"
    sleep 1
done
EOF
chown "$ALICE" "$T/alice/victim.sbatch"
cd "$T/alice"
victim=$(runuser -u "$ALICE" -- env LD_LIBRARY_PATH=/opt/alice/lib TMPDIR=/var/tmp/alice \
  sbatch --parsable -p debug -w "$CLUSTER_NODE" victim.sbatch | cut -d';' -f1)
check "alice's victim runs" wait_job_state "$victim" RUNNING 30
check "victim counts" wait_for 30 counter_at_least victim.out 5
check "it runs as alice" grep -q "as $ALICE\.\.\." victim.out
check "under cedana" grep -q "started under cedana" victim.err
envline=$(grep '^env:' victim.out)
check "with the environment glibc drops for cedana-slurm's capabilities (got: $envline)" \
  test "$envline" = "env: LD_LIBRARY_PATH=/opt/alice/lib TMPDIR=/var/tmp/alice"
preemptor=$(submit -p high -w "$CLUSTER_NODE" --cpus-per-task="$(nproc)" --output=/dev/null "$HERE/preemptor.sbatch")
check "victim checkpointed at preemption" wait_for 30 grep -q "taken on preemption" victim.err
check "criu dumped as alice" grep -q "dump: criu runs as $ALICE (unprivileged mode)" "$T/daemon.log"
at_preempt=$(last_counter victim.out)
ck=$(ls "$T/export/$ALICE/alice-victim" 2>/dev/null | head -n1)
check "the checkpoint is in alice's directory of the export" test -f "$T/export/$ALICE/alice-victim/$ck/manifest.json"
check "every checkpoint file belongs to alice" \
  bash -c "[ \"\$(find '$T/export/$ALICE/alice-victim' -printf '%u\n' | sort -u)\" = '$ALICE' ]"
check "bob lists none of alice's checkpoints" \
  bash -c "! runuser -u $BOB -- '$CEDANA' checkpoints 2>&1 | grep -q alice-victim"
check "bob cannot restore alice's checkpoint" \
  bash -c "runuser -u $BOB -- '$CEDANA' restore '$ck' 2>&1 | grep -q 'checkpoint $ck not found'"
check "victim requeued (PENDING)" wait_job_state "$victim" PENDING 120
check "preemptor runs" wait_job_state "$preemptor" RUNNING 60
scancel "$preemptor"
release_requeue_hold "$victim"
check "victim runs again" wait_job_state "$victim" RUNNING 60
check "victim resumed from its checkpoint" wait_for 30 grep -q "resumed from checkpoint" victim.err
check "criu restored as alice" bash -c "grep -l 'criu restores as uid $(id -u "$ALICE") (unprivileged mode)' '$T'/state/workloads/*/supervisor.log"
check "victim counts on" wait_for 30 counter_at_least victim.out $((at_preempt + 3))
# Its output was kept across the requeue (append mode): one count from 0, the resumed run going
# on where the checkpoint was.
check "victim.out: every counter from 0 once across the requeue (checkpoint at $at_preempt)" counts_from_zero victim.out
check "the script started once" test "$(count_of victim.out 'Starting victim')" = 1
wpid=$("$CEDANA" ps --json | python3 -c "import json,sys
for w in json.load(sys.stdin):
    if w.get('job_id') == sys.argv[1] and w.get('status') == 'running': print(w['pid'])" "$victim")
check "the restored workload runs as alice" test "$(stat -c %U "/proc/$wpid" 2>/dev/null)" = "$ALICE"
scancel "$victim"
check "scancel takes a checkpoint, as alice" wait_for 20 grep -q "taken on SIGTERM" victim.err

say ""
say "$(basename "$0"): $PASSED passed, $FAILED failed"
if [ "$FAILED" -gt 0 ]; then
  say "--- victim.out (head) ---"; head -5 victim.out >&2
  say "--- victim.err ---"; cat victim.err >&2
  say "--- daemon log (tail) ---"; tail -30 "$T/daemon.log" >&2
  exit 1
fi
