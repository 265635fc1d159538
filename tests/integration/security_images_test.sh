#!/bin/bash
# Attacks through what a checkpoint carries and where it is kept (docs/security.md, "The
# credentials check", "Direct restore", "Manifests from writable storage"), each run by a real
# non-root user created here, each with a positive control that must dump or restore and work.
#
# Part 1, privileged mode (CRIU runs as root): alice asks for checkpoints of processes holding
# more than she may (a setuid or setgid program, file capabilities, a user namespace of her own)
# and restores one after she lost a group. A check fails when the dump or restore goes through,
# or when a refused dump leaves her process stopped.
# Part 2, unprivileged mode, where alice owns her directory of the checkpoint dir: she rewrites
# a stream's tail to replace a verified core image, points a manifest at another one through a
# symlink, forges a manifest's owner and label, and puts an endless or oversized file in a
# manifest's place.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/security_lib.sh"
BOB=cedana-bob
id "$BOB" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$BOB"
GROUP=cedana-sec-group
getent group "$GROUP" >/dev/null || groupadd "$GROUP"
GROUP_ID=$(getent group "$GROUP" | cut -d: -f3)
CLEANUPS+=("groupdel '$GROUP' 2>/dev/null")

# start_as USER [--userns] PROGRAM ARG...: USER starts PROGRAM in its own session (in a user
# namespace of its own with --userns), with only its own files open (nothing inherited from the
# harness); sets $pid, found by the real uid (a setuid program's effective uid is root's). Each
# is stopped at the end of the suite.
STARTED_PIDS=()
CLEANUPS+=('[ ${#STARTED_PIDS[@]} -eq 0 ] || kill "${STARTED_PIDS[@]}" 2>/dev/null')
start_as() {
  local user=$1 userns=(); shift
  [ "$1" = --userns ] && { userns=(unshare --user --map-root-user); shift; }
  runuser -u "$user" -- setsid -f "${userns[@]}" python3 -c \
    'import os, sys; os.closerange(3, 1 << 16); os.execv(sys.argv[1], sys.argv[1:])' "$@" </dev/null >/dev/null 2>&1
  wait_for 10 pgrep -U "$user" -f "^$*\$" >/dev/null
  pid=$(pgrep -n -U "$user" -f "^$*\$") && STARTED_PIDS+=("$pid")
}
alice_runs() { start_as "$ALICE" "$@"; }
fails_to_restore() { ! restore_as_alice "$@"; }
nothing_running() { ! "$CEDANA" ps --json | grep -q '"status": *"running"'; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
# dump_refused ROUND PID: alice's dump of PID fails, and PID is still running, not stopped.
dump_refused() {
  if as_alice "$CEDANA" dump --pid "$2" >"$T/$1.dump" 2>&1; then return 1; fi
  sleep 0.5
  kill -0 "$2" 2>/dev/null || { say "$1: the process is gone after the refused dump"; return 1; }
  [ "$(state_of "$2")" != T ] || { say "$1: the process was left stopped"; return 1; }
}
# dump_works ROUND PID: alice's dump of PID makes a checkpoint (its id in $T/ROUND.ck).
dump_works() {
  dump_and_wait "$@" >"$T/$1.ck"
  [ -n "$(cat "$T/$1.ck")" ] || { cat "$T/$1.dump.err" >&2; return 1; }
}

# === part 1: privileged mode ===================================================================
start_daemon || exit 1
SLEEP=$(readlink -f "$(command -v sleep)")

# --- a setuid-root program: its checkpoint would be a root process alice controls ------------
install -m 4755 "$SLEEP" "$R/suid-sleep"
as_alice install -m 0755 "$SLEEP" "$A/plain-sleep"
alice_runs "$R/suid-sleep" 301
check "setuid attack: alice's dump of her setuid-root process is refused" dump_refused suid "$pid"
alice_runs "$A/plain-sleep" 302
check "setuid control: the same program without the setuid bit dumps" dump_works plain "$pid"

# --- a setgid program of a group alice is not in -----------------------------------------------
install -m 2755 -g "$GROUP" "$SLEEP" "$R/sgid-sleep"
alice_runs "$R/sgid-sleep" 303
check "setgid attack: alice's dump of her setgid process is refused" dump_refused sgid "$pid"

# --- a program with file capabilities ---------------------------------------------------------
install -m 0755 "$SLEEP" "$R/cap-sleep" && setcap cap_net_raw+ep "$R/cap-sleep"
alice_runs "$R/cap-sleep" 304
check "file capabilities attack: alice's dump of a process holding capabilities is refused" dump_refused cap "$pid"

# --- a user namespace of her own: full capabilities in it, and CRIU would create it as root -----
alice_runs --userns "$A/plain-sleep" 305
check "user namespace attack: alice's dump of a tree in a user namespace of its own is refused" dump_refused userns "$pid"

# --- a supplementary group lost since the dump ------------------------------------------------
# Carol's alone: a change to alice's groups would reach the other security suites' alice.
CAROL=cedana-carol
id "$CAROL" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$CAROL"
usermod -aG "$GROUP" "$CAROL"
as_carol() { runuser -u "$CAROL" -- "$@"; }
carol_restores() { as_carol "$CEDANA" restore "$2" >"$T/$1.restore" 2>&1 || { cat "$T/$1.restore" >&2; return 1; }; }
carol_refused() { ! as_carol "$CEDANA" restore "$2" >"$T/$1.restore" 2>&1 && grep -qF "$3" "$T/$1.restore"; }
seconds=310
for round in control attack; do
  start_as "$CAROL" "$SLEEP" $((seconds++))
  check "group $round: carol's process holds $GROUP" grep -qE "^Groups:.*\b$GROUP_ID\b" "/proc/$pid/status"
  as_carol "$CEDANA" dump --pid "$pid" >"$T/group-$round.ck" 2>"$T/group-$round.dump.err"
  wait_for 10 bash -c "! kill -0 $pid 2>/dev/null"
  check "group $round: carol dumps it while she is in $GROUP" test -s "$T/group-$round.ck"
done
check "group control: the restore works while she is still in $GROUP" \
  carol_restores group-control "$(tail -n1 "$T/group-control.ck")"
stop_restored
gpasswd -d "$CAROL" "$GROUP" >/dev/null
check "group attack: the restore after she left $GROUP is refused and names the group" \
  carol_refused group-attack "$(tail -n1 "$T/group-attack.ck")" "supplementary group $GROUP_ID"
check "group attack: nothing was restored" nothing_running
stop_restored
stop_daemon

# === part 2: unprivileged mode, alice owns her directory of the checkpoint dir ================
# A checkpoint dir of its own: part 1's (root's, 0700 label dirs) is not one alice can list.
export CEDANA_CHECKPOINT_DIR=$T/checkpoints-unprivileged
use_criu_as_in_unprivileged_mode
start_daemon CEDANA_SLURM_UNPRIVILEGED=1 || exit 1
# checkpoint_path CK: the directory of checkpoint CK (alice's).
checkpoint_path() { find "$CEDANA_CHECKPOINT_DIR/$ALICE" -mindepth 2 -maxdepth 2 -name "$1" -type d; }
# reader ROUND: alice's process reading her file ROUND.data, dumped without compression as one
# stream (labelled ROUND); prints the checkpoint id.
reader() {
  as_alice bash -c "echo 'alice reads $1' >'$A/$1.data'"
  local pid
  pid=$(hold "$1" read "$A/$1.data")
  dump_and_wait "$1" "$pid" --compression none --streams 1 --label "$1"
}

# --- direct restore: a tail entry that rewrites a core image CRIU already trusts ---------------
for round in stream-control stream-attack pages-attack; do
  ck=$(reader $round)
  check "$round: alice dumps her reader" test -n "$ck"
  if [ $round = stream-attack ]; then
    # After the verified head only memory pages may come; rename the tail's first entry to a
    # part of the head's core image (written at an offset, without O_EXCL) as alice can.
    dir=$(checkpoint_path "$ck")
    as_alice python3 - "$dir" <<'EOF' || fail "stream attack: could not alter the stream"
import json, sys
d = sys.argv[1]
head = json.load(open(d + "/manifest.json"))["streams"][0]["head"]["raw_bytes"]
data = bytearray(open(d + "/stream-0", "rb").read())
core = next(data[o:o + 100].rstrip(b"\0").decode() for o in range(0, head, 512)
            if data[o:o + 5] == b"core-" and data[o + 257:o + 262] == b"ustar")
assert data[head:head + 6] == b"pages-", "the tail does not start with the pages"
name = (core + "@" + "0" * 16).encode()
data[head:head + 100] = name + b"\0" * (100 - len(name))
data[head + 148:head + 156] = b" " * 8
data[head + 148:head + 155] = b"%06o\0" % sum(data[head:head + 512])
open(d + "/stream-0", "wb").write(data)
EOF
    check "stream attack: the restore is refused" fails_to_restore $round "$ck"
    # The rule refuses the entry before a byte of it is written (unit test
    # ATailEntryCannotRewriteAVerifiedImage shows the verified image unchanged).
    check "stream attack: the direct restore stopped at the altered entry, by the tail rule" \
      grep -q "direct restore stopped before CRIU could finish: .*core-[0-9]*.img comes after the stream's verified head" "$T/$round.restore"
    check "stream attack: the plain retry refused the stream too (checksum mismatch)" \
      grep -q "after a full unpack failed too: .*checksum mismatch" "$T/$round.restore"
    check "stream attack: nothing was restored" nothing_running
  elif [ $round = pages-attack ]; then
    # A byte of the first pages image changed in place (the same file, as alice can). CRIU reads
    # those pages in place (see the control round) and is done before the stream's hash reaches
    # its end; the tree it left stopped is killed then. (Through a pipe, the hash fails first and
    # CRIU stops: "direct restore stopped before CRIU could finish".)
    dir=$(checkpoint_path "$ck")
    as_alice python3 - "$dir" <<'EOF' || fail "pages attack: could not alter the stream"
import json, sys
d = sys.argv[1]
head = json.load(open(d + "/manifest.json"))["streams"][0]["head"]["raw_bytes"]
with open(d + "/stream-0", "r+b") as f:
    f.seek(head)
    assert f.read(6) == b"pages-", "the tail does not start with the pages"
    f.seek(head + 512 + 100)
    b = f.read(1)[0]
    f.seek(head + 512 + 100)
    f.write(bytes([b ^ 0x20]))
EOF
    check "pages attack: the restore is refused" fails_to_restore $round "$ck"
    check "pages attack: the direct restore's tree was killed before it ran" \
      grep -q "restored workload .* killed before it ran: .*checksum mismatch" "$T/$round.restore"
    check "pages attack: nothing was restored" nothing_running
  else
    check "stream control: the restore works" restores $round "$ck"
    check "stream control: it was a direct restore" grep -q "restored as workload .*direct, heads" "$T/daemon.log"
    check "stream control: alice's CRIU read the pages in place from her stored stream" \
      grep -q "restored as workload .*direct, heads.* images read in place" "$T/daemon.log"
    go $round
    check "stream control: the restored process reads alice's file" wait_for 10 grep -q "alice reads" "$A/$round.run/seen"
  fi
  stop_restored
done

# --- manifests: a symlink to another (genuine) manifest, a forged owner, a FIFO, 2 MiB ----------
ck_real=$(reader manifest-real)
ck_link=$(reader manifest-link)
ck_forged=$(reader manifest-forged)
ck_fifo=$(reader manifest-fifo)
ck_big=$(reader manifest-big)
check "manifests: alice dumps five readers" test -n "$ck_real" -a -n "$ck_link" -a -n "$ck_forged" -a -n "$ck_fifo" -a -n "$ck_big"
link_dir=$(checkpoint_path "$ck_link") forged_dir=$(checkpoint_path "$ck_forged")
as_alice bash -c "rm '$link_dir/manifest.json' && ln -s '$(checkpoint_path "$ck_real")/manifest.json' '$link_dir/manifest.json'"
as_alice python3 - "$forged_dir/manifest.json" "$BOB" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m.update(owner=sys.argv[2], label="bobs-label")
json.dump(m, open(sys.argv[1], "w"))
EOF
fifo_dir=$(checkpoint_path "$ck_fifo") big_dir=$(checkpoint_path "$ck_big")
as_alice bash -c "rm '$fifo_dir/manifest.json' && mkfifo '$fifo_dir/manifest.json'"
as_alice bash -c "head -c 2097152 /dev/zero | tr '\\0' ' ' >'$big_dir/manifest.json'"
check "manifest symlink: the restore is refused and says the manifest is a symlink" \
  refused manifest-link "$ck_link" "manifest.json is reached through a symlink"
check "manifest forged: the restore is refused (its MAC does not verify)" fails_to_restore manifest-forged "$ck_forged"
check "manifest forged: bob's listing does not show it" \
  bash -c "! runuser -u '$BOB' -- '$CEDANA' checkpoints --json | grep -q '$ck_forged'"
check "manifest forged: bob cannot restore it" \
  bash -c "! runuser -u '$BOB' -- '$CEDANA' restore '$ck_forged' >/dev/null 2>&1"
check "manifest FIFO: alice's listing answers (no read blocks on it)" \
  timeout 20 runuser -u "$ALICE" -- "$CEDANA" checkpoints --json >"$T/listing.json"
check "manifest FIFO: the restore is refused, naming a file that is not regular" \
  refused manifest-fifo "$ck_fifo" "manifest.json is not a regular file"
check "manifest 2 MiB: the restore is refused, naming the size" \
  refused manifest-big "$ck_big" "more than a manifest may be"
check "manifests: alice's listing shows only her genuine checkpoints as good" python3 - "$T/listing.json" \
  "$ck_real" "$ck_forged" "$ck_link" "$ck_fifo" "$ck_big" <<'EOF'
import json, sys
listed = {c["id"]: c for c in json.load(open(sys.argv[1]))}
real, forged, *unusable = sys.argv[2:]
assert listed[real]["state"] == "good", listed.get(real)
assert forged not in listed or listed[forged]["state"] != "good", listed[forged]
assert not set(unusable) & set(listed), set(unusable) & set(listed)
EOF
check "manifest control: the genuine checkpoint restores" restores manifest-real "$ck_real"
go manifest-real
check "manifest control: the restored process reads alice's file" wait_for 10 grep -q "alice reads" "$A/manifest-real.run/seen"
stop_restored

check "criu ran as alice in part 2 (unprivileged mode)" grep -q "dump: criu runs as $ALICE (unprivileged mode)" "$T/daemon.log"
finish
