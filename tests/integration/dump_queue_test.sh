#!/bin/bash
# The node daemon's dump queue (daemon/dump_queue.h) with real CRIU. With one dump at a time
# (checkpoint.parallel_dumps=1), dumps asked for while another runs wait, their workloads running
# on; they start earliest deadline first, then smallest first; no two overlap; and each is told
# as it enters when it is expected to end, so that one that cannot end by its deadline hears it.
source "$(dirname "$0")/lib.sh"
REQ=$HERE/daemon_request.py
start_daemon CEDANA_CHECKPOINT_PARALLEL_DUMPS=1 || exit 1
export COUNTER_SLEEP=0.2

# A large workload whose dump takes a while, then four that wait for it.
big=$("$CEDANA" run --label q-big --output "$T/big.out" -- "$MEMSTATE" 400 "$T/flag" 0 2>/dev/null)
mid=$("$CEDANA" run --label q-mid --output "$T/mid.out" -- "$MEMSTATE" 64 "$T/flag" 0 2>/dev/null)
declare -A small
for name in late soon none; do
  small[$name]=$("$CEDANA" run --label q-$name --output "$T/$name.out" -- "$WORKLOADS/counter.sh" 2>/dev/null)
done
check "workloads ready" wait_for 120 bash -c "grep -q ready '$T/big.out' && grep -q ready '$T/mid.out' && grep -q 'Counter: 2' '$T/none.out'"

now_ms() { date +%s%3N; }
dump() { # dump ID OUT [DEADLINE_MS]: a leave-running dump with its progress lines in OUT
  local req="{\"op\": \"dump\", \"id\": \"$1\", \"leave_running\": true${3:+, \"deadline_ms\": $3}}"
  PRINT_PROGRESS=1 python3 "$REQ" "$req" >"$2" 2>&1
}
dump "$big" "$T/big.req" &
first=$!
wait_for 30 grep -q '"phase": "queued"' "$T/big.req"
in_10_min=$(($(now_ms) + 600000))
# Sent in the opposite of the order they must start in.
dump "${small[none]}" "$T/none.req" &
p1=$!
dump "$mid" "$T/mid.req" "$in_10_min" &
p2=$!
dump "${small[soon]}" "$T/soon.req" "$in_10_min" &
p3=$!
# Already due: it cannot end in time, and is told so (it still runs, last of those with a deadline).
dump "${small[late]}" "$T/late.req" "$(($(now_ms) + 1))" &
p4=$!
for p in $first $p1 $p2 $p3 $p4; do wait "$p"; done
for name in big none mid soon late; do
  check "dump of q-$name committed" grep -q '"ok": true' "$T/$name.req"
done
check "the first dump did not wait" grep -q '"ahead": 0' "$T/big.req"
check "the others were told they wait behind it" \
  bash -c "grep -q '\"ahead\": [1-9]' '$T/mid.req' && grep -q '\"ahead\": [1-9]' '$T/none.req'"
check "one with a deadline far ahead is expected to make it" grep -q '"fits": true' "$T/soon.req"
check "one already due is told it will not" grep -q '"fits": false' "$T/late.req"
check "the workloads ran on while their dumps waited" is_status "${small[none]}" running

# From the daemon's log: each dump's label, start and end (its line's time minus its total).
python3 - "$T/daemon.log" >"$T/order" <<'PY'
import re, sys
from datetime import datetime
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) info  dump: checkpoint \S+ of pid \d+ \(label (q-\w+),.* total (\d+) ms", line)
    if m:
        end = datetime.strptime(m[1], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
        print(m[2], int(end) - int(m[3]), int(end))
PY
check "the order: the running one, then by deadline (late, soon, mid), smallest first, then none" \
  test "$(awk '{print $1}' "$T/order" | paste -sd' ')" = "q-big q-late q-soon q-mid q-none"
check "no two dumps ran at once" python3 -c "
import sys
spans = sorted((int(s), int(e)) for _, s, e in (l.split() for l in open(sys.argv[1])))
sys.exit(0 if len(spans) == 5 and all(a[1] <= b[0] + 5 for a, b in zip(spans, spans[1:])) else 1)" "$T/order"
check "the log says how long each waited" \
  test "$(grep -c 'label q-.*waited [0-9]* ms for a slot' "$T/daemon.log")" -ge 3
[ "$FAILED" -gt 0 ] && cat "$T/order" >&2

touch "$T/flag"
for w in "$big" "$mid" "${small[@]}"; do "$CEDANA" kill "$w" >/dev/null 2>&1; done
finish
