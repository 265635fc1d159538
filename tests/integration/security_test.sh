#!/bin/bash
# A restore must never give a user more than they already had (docs/security.md, "Restores open
# files as the owner"). Each attack runs as a real non-root user created here: the user holds one
# of their own files open (read, append, a shared mapping, a cwd, a FIFO, a unix socket path),
# dumps the process with `cedana dump --pid`, points the path at something only root may open
# and asks for the restore. A check fails when the attack succeeds (the restored process reads,
# writes or creates what the user could not); each has a positive control, the same steps without
# the swap, which must restore and work, so that a broken restore cannot pass for a refusal.
#
#   security_test.sh                privileged mode: CRIU runs as root
#   security_test.sh unprivileged   CRIU runs as the user with the seeds' file capabilities,
#                                   CAP_DAC_READ_SEARCH among them
MODE=${1:-privileged}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/security_lib.sh"
if [ "$MODE" = unprivileged ]; then
  use_criu_as_in_unprivileged_mode
  start_daemon CEDANA_SLURM_UNPRIVILEGED=1 || exit 1
  at_end() { check "criu ran as alice (unprivileged mode)" grep -q "dump: criu runs as $ALICE (unprivileged mode)" "$T/daemon.log"; }
else
  at_end() { :; }
  start_daemon || exit 1
fi

# --- attack: read a root-only file through a descriptor ---------------------------------------
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$R/secret"; chmod 0600 "$R/secret"
for round in control attack; do
  as_alice bash -c "printf 'decoy %.0s' {1..10} >'$A/read-$round'"
  same_size_as "$R/secret" "$A/read-$round"
  pid=$(hold "read-$round" read "$A/read-$round")
  ck=$(dump_and_wait "read-$round" "$pid")
  check "read $round: alice dumps her reader" test -n "$ck"
  if [ $round = attack ]; then
    as_alice bash -c "rm '$A/read-$round' && ln -s '$R/secret' '$A/read-$round'"
    check "read attack: the restore is refused and names the path" refused read-attack "$ck" "$A/read-$round"
    go read-attack; sleep 1
    check "read attack: no restored process read the root-only file" bash -c "! grep -qF '$(cat "$R/secret")' '$A/read-attack.run/seen' 2>/dev/null"
  else
    check "read control: the restore works" restores read-control "$ck"
    go read-control
    check "read control: the restored process reads alice's file" wait_for 10 bash -c "grep -q decoy '$A/read-control.run/seen'"
  fi
  stop_restored
done

# --- attack: append to a root-owned 0644 file (as /etc/passwd is) ------------------------------
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$R/passwd"; chmod 0644 "$R/passwd"
cp -p "$R/passwd" "$T/passwd.before"
for round in control attack; do
  as_alice cp "$R/passwd" "$A/append-$round"
  pid=$(hold "append-$round" append "$A/append-$round")
  ck=$(dump_and_wait "append-$round" "$pid")
  if [ $round = attack ]; then
    as_alice bash -c "rm '$A/append-$round' && ln -s '$R/passwd' '$A/append-$round'"
    check "append attack: the restore is refused and names the path" refused append-attack "$ck" "$A/append-$round"
    go append-attack; sleep 1
    check "append attack: the root-owned file is unchanged" cmp -s "$R/passwd" "$T/passwd.before"
  else
    check "append control: the restore works" restores append-control "$ck"
    go append-control
    check "append control: the restored process appends to alice's file" \
      wait_for 10 grep -q "appended by the restored process" "$A/append-control"
  fi
  stop_restored
done

# --- attack: write through a shared mapping of a root-owned 0644 file --------------------------
head -c 4096 /dev/zero >"$R/mapped"; chmod 0644 "$R/mapped"
for round in control attack; do
  as_alice cp "$R/mapped" "$A/map-$round"
  pid=$(hold "map-$round" map "$A/map-$round")
  ck=$(dump_and_wait "map-$round" "$pid")
  if [ $round = attack ]; then
    as_alice bash -c "rm '$A/map-$round' && ln -s '$R/mapped' '$A/map-$round'"
    check "shared mapping attack: the restore is refused and names the path" refused map-attack "$ck" "$A/map-$round"
    go map-attack; sleep 1
    check "shared mapping attack: the root-owned file is unchanged" bash -c "! grep -q MAPWRITE '$R/mapped'"
  else
    check "shared mapping control: the restore works" restores map-control "$ck"
    go map-control
    check "shared mapping control: the restored process writes alice's file" wait_for 10 grep -q MAPWRITE "$A/map-control"
  fi
  stop_restored
done

# --- attack: a cwd turned into a root-only directory -------------------------------------------
install -d -m 0700 "$R/private" && touch "$R/private/root-only-entry"
for round in control attack; do
  as_alice install -d -m 0700 "$A/cwd-$round"
  as_alice touch "$A/cwd-$round/alice-entry"
  pid=$(hold "cwd-$round" cwd "$A/cwd-$round")
  ck=$(dump_and_wait "cwd-$round" "$pid")
  if [ $round = attack ]; then
    as_alice bash -c "rm -r '$A/cwd-$round' && ln -s '$R/private' '$A/cwd-$round'"
    check "cwd attack: the restore is refused and names the path" refused cwd-attack "$ck" "$A/cwd-$round"
    go cwd-attack; sleep 1
    check "cwd attack: no restored process listed root's directory" bash -c "! grep -q root-only-entry '$A/cwd-attack.run/seen' 2>/dev/null"
  else
    check "cwd control: the restore works" restores cwd-control "$ck"
    go cwd-control
    check "cwd control: the restored process lists alice's directory" wait_for 10 bash -c "grep -q alice-entry '$A/cwd-control.run/seen'"
  fi
  stop_restored
done

# --- attack: a FIFO replaced by root's ----------------------------------------------------------
mkfifo -m 0600 "$R/fifo"
for round in control attack elsewhere; do
  as_alice mkfifo -m 0600 "$A/fifo-$round"
  pid=$(hold "fifo-$round" fifo "$A/fifo-$round")
  ck=$(dump_and_wait "fifo-$round" "$pid")
  if [ $round = attack ]; then
    as_alice bash -c "rm '$A/fifo-$round' && ln -s '$R/fifo' '$A/fifo-$round'"
    check "FIFO attack: the restore is refused and names the path" refused fifo-attack "$ck" "$A/fifo-$round"
  elif [ $round = elsewhere ]; then
    # A FIFO alice may open, but not the one dumped: the path now resolves elsewhere.
    as_alice bash -c "mkfifo -m 0600 '$A/fifo-other' && rm '$A/fifo-$round' && ln -s '$A/fifo-other' '$A/fifo-$round'"
    check "FIFO elsewhere: a path that now leads through a symlink is refused" \
      refused fifo-elsewhere "$ck" "$A/fifo-$round now leads through a symlink"
  else
    check "FIFO control: the restore works" restores fifo-control "$ck"
    go fifo-control
    check "FIFO control: the restored process runs" wait_for 10 bash -c "grep -q alive '$A/fifo-control.run/seen'"
  fi
  stop_restored
done

# --- attack: a unix socket bound under a directory swapped for root's ---------------------------
install -d -m 0700 "$R/sockets"
for round in control attack; do
  as_alice install -d -m 0755 "$A/sock-$round"
  pid=$(hold "sock-$round" unix "$A/sock-$round/s")
  ck=$(dump_and_wait "sock-$round" "$pid")
  as_alice rm -f "$A/sock-$round/s"  # the dead process's socket file, as after a reboot
  if [ $round = attack ]; then
    as_alice bash -c "rm -r '$A/sock-$round' && ln -s '$R/sockets' '$A/sock-$round'"
    check "unix socket attack: the restore is refused and names the path" refused sock-attack "$ck" "$A/sock-$round/s"
    check "unix socket attack: nothing was created in root's directory" bash -c "[ -z \"\$(ls -A '$R/sockets')\" ]"
  else
    check "unix socket control: the restore works" restores sock-control "$ck"
    check "unix socket control: the socket is bound again, alice's" \
      bash -c "[ -S '$A/sock-control/s' ] && [ \"\$(stat -c %U '$A/sock-control/s')\" = '$ALICE' ]"
  fi
  stop_restored
done

# --- attack: the executable (and its text mapping) replaced by a root-only program -------------
install -m 0700 "$(readlink -f "$(command -v sleep)")" "$R/root-sleep"
for round in control attack; do
  as_alice install -m 0755 "$(readlink -f "$(command -v sleep)")" "$A/exe-$round"
  # Only its own files: nothing inherited from the harness (see fd_holder.py).
  as_alice setsid -f python3 -c 'import os, sys; os.closerange(3, 1 << 16); os.execv(sys.argv[1], sys.argv[1:])' \
    "$A/exe-$round" 300 </dev/null >/dev/null 2>&1
  wait_for 10 pgrep -u "$ALICE" -f "^$A/exe-$round 300" >/dev/null
  pid=$(pgrep -u "$ALICE" -f "^$A/exe-$round 300")
  ck=$(dump_and_wait "exe-$round" "$pid")
  if [ $round = attack ]; then
    as_alice bash -c "rm '$A/exe-$round' && ln -s '$R/root-sleep' '$A/exe-$round'"
    check "executable attack: the restore is refused and names the path" refused exe-attack "$ck" "$A/exe-$round"
  else
    check "executable control: the restore works" restores exe-control "$ck"
    check "executable control: the restored process runs alice's program" \
      bash -c "ls -l /proc/[0-9]*/exe 2>/dev/null | grep -q '$A/exe-control'"
  fi
  stop_restored
done

# --- leaks: a workload's output is its owner's alone ----------------------------------------------
w=$(as_alice "$CEDANA" run --label out-mode --output "$A/new-output.log" -- sleep 30 2>/dev/null)
wait_for 10 test -e "$A/new-output.log"
check "an output file the daemon creates is 0600, alice's" \
  test "$(stat -c '%a %U' "$A/new-output.log" 2>/dev/null)" = "600 $ALICE"
[ -n "$w" ] && "$CEDANA" kill --wait "$w" >/dev/null
w=$(as_alice "$CEDANA" run --label out-default -- sleep 30 2>/dev/null)
default_out=$(wl_field "$w" stdout_path)
wait_for 10 test -e "$default_out"
check "the default output file in the daemon's records is 0600, alice's" \
  test "$(stat -c '%a %U' "$default_out" 2>/dev/null)" = "600 $ALICE"
[ -n "$w" ] && "$CEDANA" kill --wait "$w" >/dev/null

# --- a file deleted while open: CRIU would recreate it as root ---------------------------------
pid=$(hold ghost ghost "$A/ghost-file")
ck=$(dump_and_wait ghost "$pid")
check "ghost file: alice's restore is refused and names the path" refused ghost "$ck" "$A/ghost-file"
check "ghost file: nothing was created at the path" test ! -e "$A/ghost-file"
stop_restored
# Control: root's own process with a deleted file restores (root may create anything).
install -d "$R/ghost.run"
setsid -f python3 "$HOLDER" ghost "$R/ghost-file" "$R/ghost.run" </dev/null >/dev/null 2>&1
wait_for 10 test -f "$R/ghost.run/pid"
rpid=$(cat "$R/ghost.run/pid")
rck=$("$CEDANA" dump --pid "$rpid" 2>/dev/null | tail -n1)
wait_for 10 bash -c "! kill -0 $rpid 2>/dev/null"
check "ghost control: root's process with a deleted file restores" "$CEDANA" restore "$rck"
stop_restored

at_end
finish
