#!/bin/bash
# Unprivileged mode (CEDANA_SLURM_UNPRIVILEGED=1) with real CRIU and two real non-root users:
# CRIU dumps and restores as the workload's owner with only the seeds' file capabilities, the
# workload lives in the node's PID namespace, and the checkpoint files are written and read as
# the owner on a checkpoint dir where root cannot create anything (an idmapped mount that maps
# only the test users: the stand-in for NFS with root_squash, tests/tools/idmapped_mount.py).
# Another user can neither see, restore nor delete the owner's checkpoints.
source "$(dirname "$0")/lib.sh"

expect_error() { # description expected-substring command...
  local what=$1 want=$2; shift 2
  local out; out=$("$@" 2>&1) && { fail "$what: succeeded: $out"; return; }
  if grep -qF -- "$want" <<<"$out"; then pass "$what"; else fail "$what: got: $out"; fi
}

ALICE=cedana-alice BOB=cedana-bob
for u in "$ALICE" "$BOB"; do id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$u"; done
as_alice() { runuser -u "$ALICE" -- "$@"; }
as_bob() { runuser -u "$BOB" -- "$@"; }
chmod 755 "$T"  # the users reach the socket and their output files

# criu with the seeds' capabilities, as `cedana slurm setup` gives them in this mode (a copy:
# the installed criu is shared with suites that run beside this one).
CRIU_DIR=$(mktemp -d /var/tmp/cedana-criu.XXXXXX)
chmod 755 "$CRIU_DIR"
CLEANUPS+=("rm -rf '$CRIU_DIR'")
cp "$(readlink -f "$(command -v criu || echo /opt/cedana/criu/sbin/criu)")" "$CRIU_DIR/criu"
export CEDANA_CRIU_BINARY=$CRIU_DIR/criu

# The root-squashed checkpoint dir: per-user directories, as an admin makes them on an export.
mkdir -p "$T/export" "$CEDANA_CHECKPOINT_DIR"
for u in "$ALICE" "$BOB"; do install -d -m 0700 -o "$u" -g "$(id -gn "$u")" "$T/export/$u"; done
/usr/bin/python3 "$ROOT/tests/tools/idmapped_mount.py" "$T/export" "$CEDANA_CHECKPOINT_DIR" \
  "$(id -u "$ALICE"),$(id -u "$BOB")" "$(id -g "$ALICE"),$(id -g "$BOB")" || { fail "idmapped mount"; finish; }
CLEANUPS=("umount '$CEDANA_CHECKPOINT_DIR'" "${CLEANUPS[@]}")
check "root cannot create files in the checkpoint dir (root_squash stand-in)" \
  bash -c "! touch '$CEDANA_CHECKPOINT_DIR/$ALICE/by-root' 2>/dev/null"

start_daemon CEDANA_SLURM_UNPRIVILEGED=1 || exit 1
export COUNTER_SLEEP=0.1
install -d -m 0755 -o "$ALICE" "$T/alice"

w=$(as_alice "$CEDANA" run --label unpriv --output "$T/alice/counter.out" -- "$WORKLOADS/counter.sh" 2>"$T/run.err")
check "alice's workload starts" test -n "$w"
wait_for 20 at_least "$T/alice/counter.out" "Counter: " 3
pid=$(wl_field "$w" pid)
check "it runs as alice" test "$(stat -c %U "/proc/$pid")" = "$ALICE"
check "in the node's PID namespace" test "$(readlink "/proc/$pid/ns/pid")" = "$(readlink /proc/self/ns/pid)"

# Without the capabilities on criu: a clear error, and the workload keeps running.
expect_error "criu without the seeds' capabilities is named" "setcap CAP_DAC_READ_SEARCH,CAP_SYS_PTRACE,CAP_CHECKPOINT_RESTORE+eip $CRIU_DIR/criu" \
  as_alice "$CEDANA" dump "$w"
check "the workload still runs after that refusal" is_status "$w" running
setcap cap_sys_ptrace,cap_dac_read_search,cap_checkpoint_restore+eip "$CRIU_DIR/criu"

ck=$(as_alice "$CEDANA" dump "$w" 2>>"$T/cli.err")
check "alice dumps her workload" test -n "$ck"
check "criu ran as alice" grep -q "dump: criu runs as $ALICE (unprivileged mode)" "$T/daemon.log"
dir="$T/export/$ALICE/unpriv/$ck"
check "the checkpoint is in alice's directory of the export" test -f "$dir/manifest.json"
check "every checkpoint file belongs to alice" \
  bash -c "[ \"\$(find '$dir' -printf '%u\n' | sort -u)\" = '$ALICE' ]"
check "and is hers alone (0600 files, 0700 dirs)" \
  bash -c "[ \"\$(find '$dir' -type f -printf '%m\n' | sort -u)\" = 600 ] && [ \"\$(stat -c %a '$dir')\" = 700 ]"
before=$(last_number "$T/alice/counter.out" "Counter: ")

# Bob: nothing of alice's, nothing leaked in the errors.
check "bob lists none of alice's checkpoints" bash -c "! runuser -u $BOB -- '$CEDANA' checkpoints 2>&1 | grep -q unpriv"
# Bob's requests read the store as bob: alice's directory is closed to him, so her checkpoint
# does not exist for him (not even "it belongs to someone else").
expect_error "bob cannot restore alice's checkpoint" "checkpoint $ck not found" as_bob "$CEDANA" restore "$ck"
expect_error "bob's --label finds nothing of alice's" "no checkpoint of label unpriv" as_bob "$CEDANA" restore --label unpriv
expect_error "bob cannot delete alice's checkpoint" "checkpoint $ck not found" as_bob "$CEDANA" checkpoints delete "$ck"
check "bob cannot read alice's checkpoint files" bash -c "! runuser -u $BOB -- cat '$dir/manifest.json' >/dev/null 2>&1"

r=$(as_alice "$CEDANA" restore --label unpriv 2>>"$T/cli.err")
check "alice restores her checkpoint" test -n "$r"
check "criu restored as alice" grep -q "criu restores as uid $(id -u "$ALICE") (unprivileged mode)" "$T/state/workloads/$r/supervisor.log"
rpid=$(wl_field "$r" pid)
check "the restored workload has its old pid" test "$rpid" = "$pid"
check "and runs as alice" test "$(stat -c %U "/proc/$rpid")" = "$ALICE"
check "the counter goes on" wait_for 20 at_least "$T/alice/counter.out" "Counter: " $((before + 5))

# A restore while the dumped pids are taken fails with a reason and leaves the checkpoint.
ck2=$(as_alice "$CEDANA" dump "$r" --leave-running 2>>"$T/cli.err")
check "a leave-running dump of the restored workload" test -n "$ck2"
expect_error "restoring over its own running pids names the conflict" "another process uses one of the dumped pids" \
  as_alice "$CEDANA" restore "$ck2"
check "the checkpoint is still there" test -f "$T/export/$ALICE/unpriv/$ck2/manifest.json"
as_alice "$CEDANA" kill --wait "$r" >/dev/null
check "counter sequence has no gap, repeat or restart" sequence_ok "$T/alice/counter.out" "Counter: "

# Crafted checkpoints. In this mode alice owns her checkpoint files and can rewrite them; the
# cluster key stays root's, so whatever she changes is refused before CRIU sees it.
m2="$T/export/$ALICE/unpriv/$ck2/manifest.json"
cp -p "$m2" "$T/manifest.good"
craft() { # craft PYTHON-EXPRESSION-ON-m: rewrites alice's manifest as alice would
  as_alice /usr/bin/python3 -c "import json,sys,hmac,hashlib
p=sys.argv[1]; m=json.load(open(p)); $1
open(p,'w').write(json.dumps(m))" "$m2"
}
n_workloads() { "$CEDANA" ps --json | grep -c '"id"'; }
n0=$(n_workloads)
craft "m['owner_uid']=0; m['owner']='root'"
expect_error "a manifest claiming uid 0 is not alice's to restore" "belongs to root, not to $ALICE" as_alice "$CEDANA" restore "$ck2"
expect_error "nor does root restore it: its MAC fails" "manifest MAC mismatch" "$CEDANA" restore "$ck2"
as_alice cp "$T/manifest.good" "$m2"
craft "m.pop('mac', None)"
expect_error "a manifest without a MAC is refused" "manifest MAC mismatch" as_alice "$CEDANA" restore "$ck2"
as_alice cp "$T/manifest.good" "$m2"
craft "m['mac']=hmac.new(b'alice-guesses-a-key', json.dumps(m).encode(), hashlib.sha256).hexdigest()"
expect_error "a manifest with a MAC under another key is refused" "manifest MAC mismatch" as_alice "$CEDANA" restore "$ck2"
as_alice cp "$T/manifest.good" "$m2"
stream=$(ls "$T/export/$ALICE/unpriv/$ck2"/stream-* | head -n1)
as_alice /usr/bin/python3 -c "import sys
p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xFF; open(p,'wb').write(bytes(b))" "$stream"
expect_error "a valid manifest with one altered stream is refused" "checksum mismatch" as_alice "$CEDANA" restore "$ck2"
check "the refusals are logged" test "$(grep -c "restore from uid [0-9]*: .*checkpoint $ck2" "$T/daemon.log")" -ge 5
check "nothing was restored" test "$(n_workloads)" = "$n0"
long=$(printf 'a%.0s' $(seq 10000))
expect_error "a label with ../ is refused" "a label is 1 to 128 letters" as_alice "$CEDANA" restore --label ../unpriv
expect_error "a label of 10,000 characters is refused" "a label is 1 to 128 letters" as_alice "$CEDANA" run --label "$long" -- true
expect_error "and for a dump too" "a label is 1 to 128 letters" as_alice "$CEDANA" dump "$w" --label "../../etc"
check "nothing was written outside the owners' directories" \
  bash -c "[ \"\$(ls -A '$T/export' | sort | tr '\n' ' ')\" = '$ALICE $BOB ' ] && [ -z \"\$(ls -A '$T/export/$BOB')\" ]"

check "alice deletes her checkpoint" as_alice "$CEDANA" checkpoints delete "$ck"
check "it is gone from the export" test ! -e "$dir"
finish
