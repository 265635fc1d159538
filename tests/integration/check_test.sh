#!/bin/bash
# `cedana check` and `cedana daemon check` on this node, for real: each finding, the exit status
# (0 only when a checkpoint and a restore can work), and each kind of breakage named with its fix.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
USER_NAME=cedana-check-user
id "$USER_NAME" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$USER_NAME"
chmod 755 "$T"  # the user reaches this test's daemon socket
lacks() { ! grep -Eq "$1" <<<"$2"; }  # lacks PATTERN TEXT

out=$("$CEDANA" check --probe-mib 16 2>&1); rc=$?
say "$out"
check "cedana check exits 0 on a working node" test $rc = 0
for finding in "node daemon" "criu" "criu check" "breakpoints" "soft-dirty" "network lock" \
  "capabilities" "cgroups" "checkpoint dir" "slurm" "slurm plugins" "controller"; do
  check "it reports: $finding" grep -Eq "^(ok|warn|skip|FAIL) +$finding  " <<<"$out"
done
check "the daemon is found running" grep -Eq '^ok +node daemon +running on ' <<<"$out"
check "CRIU's own check passed" grep -Eq '^ok +criu check +Looks good' <<<"$out"
check "the checkpoint dir's throughput is measured" \
  grep -Eq '^ok +checkpoint dir .*16 MiB written durably at [0-9]+ MiB/s' <<<"$out"
check "the summary says it can work" grep -q '^checkpoint and restore can work on this node' <<<"$out"
check "the throughput probe leaves nothing in the store" \
  test -z "$(find "$CEDANA_CHECKPOINT_DIR" -path '*cedana-check*' -type f 2>/dev/null)"

json=$("$CEDANA" check --json --probe-mib 1)
check "--json says it can work, with every finding" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["can_checkpoint"] is True, r
assert len(r["findings"]) == 12, len(r["findings"])
assert all(f["verdict"] in ("ok", "warn", "skip") for f in r["findings"]), r
' "$json"

out=$("$CEDANA" daemon check 2>&1); rc=$?
check "daemon check exits 0" test $rc = 0
check "daemon check leaves out SLURM and the controller" lacks '^[a-zA-Z]+ +(slurm|controller) ' "$out"
check "daemon check does not measure throughput" lacks 'written durably' "$out"
out=$("$CEDANA" daemon check --full --probe-mib 1 2>&1)
check "daemon check --full is cedana check" grep -Eq '^(ok|skip|warn) +controller ' <<<"$out"

# Each breakage fails the check, names itself and its fix.
out=$(CEDANA_CRIU_BINARY=$T/no-such-criu "$CEDANA" daemon check 2>&1); rc=$?
check "a missing criu fails the check" test $rc = 1
check "it is named, with its fix" grep -Eq '^FAIL +criu .*no-such-criu' <<<"$out"
check "the fix names the setting" grep -q 'fix: install CRIU 4.x .*criu.binary' <<<"$out"
check "the summary says it cannot work" grep -q 'cannot work on this node: 1 check failed' <<<"$out"

: >"$T/a-file"
out=$(CEDANA_CHECKPOINT_DIR=$T/a-file/checkpoints "$CEDANA" daemon check 2>&1); rc=$?
check "an unusable checkpoint dir fails the check" test $rc = 1
check "it is named, with its fix" grep -Eq '^FAIL +checkpoint dir +.*a-file/checkpoints' <<<"$out"

out=$(CEDANA_DAEMON_SOCKET=$T/nobody.sock "$CEDANA" daemon check 2>&1); rc=$?
check "a daemon that is not running fails the check" test $rc = 1
check "it is named, with how to start it" grep -A1 -E '^FAIL +node daemon' <<<"$out"
check "with how to start it" grep -q 'fix: start it: `systemctl start cedana`' <<<"$out"

cp "$(command -v criu)" "$T/criu-without-caps"
out=$(CEDANA_SLURM_UNPRIVILEGED=1 CEDANA_CRIU_BINARY=$T/criu-without-caps "$CEDANA" daemon check 2>&1); rc=$?
check "unprivileged mode with a criu lacking capabilities fails" test $rc = 1
check "naming the capabilities and the command that gives them" \
  grep -Eq '^FAIL +capabilities .*lacks CAP_.*cedana slurm setup' <<<"$out"

out=$(CEDANA_URL=http://127.0.0.1:9/v1 "$CEDANA" check --probe-mib 1 2>&1); rc=$?
check "an unreachable controller is a warning only" test $rc = 0
check "it names the URL" grep -Eq '^warn +controller +http://127.0.0.1:9/v1' <<<"$out"

# A user: what needs root is skipped and says how to check it; the rest is checked.
out=$(cd / && runuser -u "$USER_NAME" -- "$CEDANA" check 2>&1); rc=$?
say "$out"
check "a user's check exits 0 with the daemon running" test $rc = 0
check "CRIU's own check is skipped for a user, saying how to run it" \
  grep -A1 -E '^skip +criu check +CRIU.s own check needs root' <<<"$out"
check "with sudo" grep -q 'fix: run `sudo cedana check`' <<<"$out"
check "a user's check still probes breakpoints" grep -Eq '^ok +breakpoints ' <<<"$out"
finish
