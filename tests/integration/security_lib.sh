#!/bin/bash
# The security suites' shared part: a real non-root user (alice) created here, her directory and
# root's under the test dir, and the steps every attack is made of: alice holds something, dumps
# it with `cedana dump --pid`, changes the world (or her checkpoint) and asks for the restore.
# Sourced after lib.sh.
ALICE=cedana-alice
id "$ALICE" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$ALICE"
as_alice() { runuser -u "$ALICE" -- "$@"; }
chmod 755 "$T"  # alice reaches the socket and her files
HOLDER=$WORKLOADS/fd_holder.py
R=$T/root A=$T/alice
install -d -m 0755 "$R"
install -d -m 0755 -o "$ALICE" "$A"
# use_criu_as_in_unprivileged_mode: a criu with the seeds' capabilities (a copy: the installed one
# is shared with other suites) and alice's own directory of the checkpoint dir, as an admin makes
# it on an export; the daemon is then started with CEDANA_SLURM_UNPRIVILEGED=1.
use_criu_as_in_unprivileged_mode() {
  CRIU_DIR=$(mktemp -d /var/tmp/cedana-criu.XXXXXX) && chmod 755 "$CRIU_DIR"
  CLEANUPS+=("rm -rf '$CRIU_DIR'")
  cp "$(readlink -f "$(command -v criu || echo /opt/cedana/criu/sbin/criu)")" "$CRIU_DIR/criu"
  setcap cap_sys_ptrace,cap_dac_read_search,cap_checkpoint_restore+eip "$CRIU_DIR/criu"
  export CEDANA_CRIU_BINARY=$CRIU_DIR/criu
  install -d -m 0755 "$CEDANA_CHECKPOINT_DIR" && install -d -m 0700 -o "$ALICE" "$CEDANA_CHECKPOINT_DIR/$ALICE"
}

# hold ROUND MODE PATH: alice's holder of PATH in its own session, as `cedana dump --pid` wants
# it; prints its pid once it holds the file.
hold() {
  local dir=$A/$1.run
  as_alice mkdir -p "$dir"
  as_alice setsid -f python3 "$HOLDER" "$2" "$3" "$dir" </dev/null >/dev/null 2>&1
  wait_for 10 test -f "$dir/pid" && cat "$dir/pid"
}
# dump_and_wait ROUND PID [OPTION...]: alice dumps her process (it stops); prints the checkpoint id.
dump_and_wait() {
  local ck
  ck=$(as_alice "$CEDANA" dump --pid "$2" "${@:3}" 2>"$T/$1.dump.err" | tail -n1)
  wait_for 10 bash -c "! kill -0 $2 2>/dev/null"
  echo "$ck"
}
# restore_as_alice ROUND CK: the restore's output in $T/ROUND.restore; 0 when it restored.
restore_as_alice() { as_alice "$CEDANA" restore "$2" >"$T/$1.restore" 2>&1; }
# restores ROUND CK: a restore that must work (a positive control); says why when it did not.
restores() { restore_as_alice "$@" || { grep -m5 "rror" "$T/$1.restore" >&2; return 1; }; }
go() { as_alice touch "$A/$1.run/go"; }
# The restored process, if any, is alice's and was started from CK: stopped at the end.
stop_restored() { "$CEDANA" ps --json | python3 -c "import json,sys
for w in json.load(sys.stdin):
    if w.get('status') == 'running': print(w['id'])" | while read -r w; do "$CEDANA" kill --wait "$w" >/dev/null; done; }
# refused ROUND CK TEXT: the restore of CK failed and its message names TEXT (a path, a group).
refused() {
  if restore_as_alice "$1" "$2"; then return 1; fi
  grep -qF "$3" "$T/$1.restore" || { say "the refusal does not name $3: $(cat "$T/$1.restore")"; return 1; }
}
# same_size_as TARGET FILE: FILE (alice's) gets TARGET's size and mode, as CRIU checks both.
same_size_as() {
  as_alice truncate -s "$(stat -c %s "$1")" "$2"
  as_alice chmod "$(stat -c %a "$1")" "$2"
}

