#!/bin/bash
# The node daemon under abuse by a local user (any user may connect to its socket): one real
# non-root user opens 300 connections and trickles a byte a second into each. slurmd's job
# registration (root) and another user's dump must still be served; the user's own extra
# connections are refused with the reason; every slow connection is closed at the request
# deadline, after which the user is served again.
source "$(dirname "$0")/lib.sh"

ALICE=cedana-alice BOB=cedana-bob
for u in "$ALICE" "$BOB"; do id "$u" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$u"; done
chmod 755 "$T"
start_daemon || exit 1
install -d -m 0755 -o "$BOB" "$T/bob"
install -d -m 0755 -o "$ALICE" "$T/alice"

# 300 connections as alice, each sending one byte of a request every second; prints how many
# connections the daemon kept open ("served") and, once they are all gone, how many it closed.
cat >"$T/slow.py" <<'PY'
import os, socket, sys, time
socks, refused = [], 0
t0 = time.time()
for _ in range(300):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ["CEDANA_DAEMON_SOCKET"])
    socks.append(s)
print(f"connected in {time.time() - t0:.1f} s", file=sys.stderr)
time.sleep(0.5)
open_ = []
for s in socks:
    s.setblocking(False)
    try:
        data = s.recv(4096)  # a refusal is written at once, then the connection is closed
        refused += 1
    except BlockingIOError:
        open_.append(s)
with open(sys.argv[1], "w") as f:
    f.write(f"served {len(open_)} refused {refused}\n")
start = time.time()
while open_ and time.time() - start < 40:
    for s in list(open_):
        try:
            s.send(b"{")
        except OSError:
            open_.remove(s)
    time.sleep(1)
with open(sys.argv[1], "a") as f:
    f.write(f"still open after {time.time() - start:.0f} s: {len(open_)}\n")
PY
runuser -u "$ALICE" -- env CEDANA_DAEMON_SOCKET="$CEDANA_DAEMON_SOCKET" python3 "$T/slow.py" "$T/alice/slow.out" &
slow=$!
CLEANUPS+=("kill $slow 2>/dev/null")
wait_for 20 test -s "$T/alice/slow.out"
say "$(head -1 "$T/alice/slow.out")"
check "alice gets only her share of the daemon's connections" grep -q "^served 16 refused 284" "$T/alice/slow.out"
out=$(runuser -u "$ALICE" -- "$CEDANA" ps 2>&1)
check "alice's own extra request is refused, saying why" grep -q "has 16 connections to the node daemon open already" <<<"$out" || say "alice got: $out"

# While alice holds hers: root's registration (what task/cedana does for slurmd), bob's dump,
# and alice's own request refused with the reason.
check "slurmd's job registration is served" \
  python3 "$HERE/daemon_request.py" "{\"op\": \"slurm_job_start\", \"job_id\": \"4242\", \"uid\": $(id -u "$ALICE")}"
w=$(runuser -u "$BOB" -- "$CEDANA" run --label bob-job --output "$T/bob/c.out" -- "$WORKLOADS/counter.sh" 2>"$T/bob.err")
check "bob's workload starts" test -n "$w"
wait_for 20 at_least "$T/bob/c.out" "Counter: " 2
ck=$(runuser -u "$BOB" -- "$CEDANA" dump "$w" --leave-running 2>>"$T/bob.err" | tail -n1)
check "bob's dump is served" test -n "$ck"

# One deadline per request: trickling does not keep a connection.
check "every slow connection is closed at the request deadline" wait_for 40 grep -q "still open after [0-9]* s: 0" "$T/alice/slow.out"
check "the deadline is the request's, not each read's (closed within 20 s)" \
  bash -c "[ \$(grep -o 'after [0-9]*' '$T/alice/slow.out' | grep -o '[0-9]*') -le 20 ]"
check "alice is served again" runuser -u "$ALICE" -- "$CEDANA" ps
check "the refusals were logged a line a second at most" \
  test "$(grep -c 'refused a connection of uid' "$T/daemon.log")" -le 5
runuser -u "$BOB" -- "$CEDANA" kill --wait "$w" >/dev/null
finish
