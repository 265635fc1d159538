#!/bin/bash
# Connected TCP sockets (daemon/tcp_policy.h). A loopback connection between two processes of
# the workload is checkpointed and restored connected, under CRIU's nftables network lock,
# which leaves no table behind. A connection to a server outside the workload: refused by
# default, naming the peer, the workload running on; with --tcp-close restored closed (the
# client sees it lost and reconnects); with --tcp-established restored connected; and a
# workload's own CEDANA_CHECKPOINT_TCP is its default.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
PORT=$((20000 + RANDOM % 20000))

# CRIU's lock tables made during this suite (one left on the node by an earlier job whose
# connections wait for a restore is not this suite's).
TABLES_BEFORE=$(nft list tables 2>/dev/null | grep 'CRIU-')
criu_tables() { nft list tables 2>/dev/null | grep 'CRIU-' | grep -vxF -- "${TABLES_BEFORE:-none}" | grep -c . || true; }
no_criu_table() { [ "$(criu_tables)" = 0 ]; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
counting() { # counting ID FILE: running, not stopped, and its ticks go on
  local n; n=$(last_number "$2" "tick ")
  is_status "$1" running && [ "$(state_of "$(wl_field "$1" pid)")" != T ] &&
    wait_for 5 at_least "$2" "tick " $((${n:-0} + 3))
}

# --- both ends in the workload ----------------------------------------------------------------
w=$("$CEDANA" run --label tcp-pair --output "$T/pair.out" -- python3 "$WORKLOADS/tcp_pair.py" 2>/dev/null)
check "pair: the two processes talk" wait_for 20 at_least "$T/pair.out" "tick " 3
ck=$(dump_id "$w")
check "pair: a tree holding both ends of a loopback connection is dumped" test -n "$ck"
check "pair: CRIU's network lock is lifted once the tree is gone" no_criu_table
n=$(last_number "$T/pair.out" "tick ")
r=$(restore_id "$ck")
check "pair: restored" test -n "$r"
check "pair: the connection carries on: ticks go on from $n" wait_for 10 at_least "$T/pair.out" "tick " $((${n:-0} + 5))
check "pair: without a gap or repeat" sequence_ok "$T/pair.out" "tick "
check "pair: no network lock left after the restore" no_criu_table
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null

# A dump that fails after CRIU succeeded (the step after CRIU fails, as a store that gives up
# would) continues the tree: its connection must be unlocked, or the two processes wait forever.
stop_daemon
start_daemon CEDANA_TEST_PAUSE_AT=dump:dumped:0 || exit 1
w=$("$CEDANA" run --label tcp-rollback --output "$T/rollback.out" -- python3 "$WORKLOADS/tcp_pair.py" 2>/dev/null)
wait_for 20 at_least "$T/rollback.out" "tick " 3
out=$("$CEDANA" dump "$w" 2>&1)
check "rollback: the dump fails after CRIU" bash -c "! grep -q '^[0-9]\{8\}-' <<<'$out'"
check "rollback: the continued pair talks on (its connection was unlocked)" counting "$w" "$T/rollback.out"
check "rollback: no network lock left" no_criu_table
"$CEDANA" kill --wait "$w" >/dev/null
stop_daemon
start_daemon || exit 1

# --- a server outside the workload --------------------------------------------------------------
python3 "$WORKLOADS/echo_server.py" "$PORT" &
server=$!
CLEANUPS+=("kill $server")
wait_for 10 bash -c "ss -Hltn 'sport = :$PORT' | grep -q ."
client() { # client LABEL [env...]: a client workload of the server; prints its id once it counts
  local label=$1; shift
  local w; w=$(env "$@" "$CEDANA" run --label "$label" --output "$T/$label.out" -- \
    python3 "$WORKLOADS/tcp_client.py" "$PORT" 2>/dev/null)
  wait_for 20 at_least "$T/$label.out" "tick " 3
  echo "$w"
}

w=$(client tcp-refuse)
out=$("$CEDANA" dump "$w" 2>&1)
check "outside: refused by default, naming the peer" grep -q "TCP connection to 127.0.0.1:$PORT (from 127.0.0.1:[0-9]*) is outside the job" <<<"$out"
check "outside: and saying what to set" grep -q "checkpoint.tcp" <<<"$out"
check "outside: the refused workload counts on, not stopped" counting "$w" "$T/tcp-refuse.out"
check "outside: nothing locked" no_criu_table
"$CEDANA" kill --wait "$w" >/dev/null

w=$(client tcp-close)
ck=$(dump_id "$w" --tcp-close)
check "close: dumped with --tcp-close" test -n "$ck"
n=$(last_number "$T/tcp-close.out" "tick ")
r=$(restore_id "$ck")
check "close: the restored client finds its connection closed and reconnects" \
  wait_for 10 grep -q "^reconnected" "$T/tcp-close.out"
check "close: and counts on from $n" wait_for 10 at_least "$T/tcp-close.out" "tick " $((${n:-0} + 3))
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null

w=$(client tcp-established)
ck=$(dump_id "$w" --tcp-established)
check "established: dumped with --tcp-established" test -n "$ck"
check "established: the connection stays locked until the restore (the server is outside)" test "$(criu_tables)" -ge 1
n=$(last_number "$T/tcp-established.out" "tick ")
r=$(restore_id "$ck")
check "established: restored, the same connection carries on" \
  wait_for 10 at_least "$T/tcp-established.out" "tick " $((${n:-0} + 5))
check "established: never lost" bash -c "! grep -q '^lost' '$T/tcp-established.out'"
check "established: the restore lifted the lock" no_criu_table
[ -n "$r" ] && "$CEDANA" kill --wait "$r" >/dev/null

w=$(client tcp-own CEDANA_CHECKPOINT_TCP=close)
ck=$(dump_id "$w")
check "own setting: a workload run with CEDANA_CHECKPOINT_TCP=close is dumped without flags" test -n "$ck"
out=$("$CEDANA" dump --pid 1 --tcp-close --tcp-established 2>&1)
check "the two flags exclude each other" grep -qi "excludes" <<<"$out"
finish
