#!/bin/bash
# dump --leave-running keeps the workload going; a restore from that checkpoint works while the
# original still runs (its PIDs are taken: both are pid 1.. of their own PID namespaces) and
# again after the original was killed.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
export COUNTER_SLEEP=0.1

w=$("$CEDANA" run --label lr --output "$T/orig.out" -- "$WORKLOADS/counter.sh" 2>/dev/null)
wait_for 20 at_least "$T/orig.out" "Counter: " 5
# The workload runs on during and after the dump, so the dumped value lies between the counts
# before and after the dump command (under load the gap grows).
before_dump=$(grep -c Counter "$T/orig.out")
ck=$(dump_id "$w" --leave-running)
check "leave-running dump gives a checkpoint" test -n "$ck"
at_dump=$(grep -c Counter "$T/orig.out")
check "workload still running after the dump" is_status "$w" running
check "workload keeps counting" wait_for 10 at_least "$T/orig.out" "Counter: " $((at_dump + 5))

r1=$(restore_id "$ck" --output "$T/copy1.out")
check "restore while the original runs" test -n "$r1"
check "both run" bash -c "[ \"\$(\"$CEDANA\" ps --json | grep -c '\"running\"')\" -ge 2 ]"
pid=$(wl_field "$r1" pid)
check "restored workload is pid 1 of its own namespace (same inner pid as the original)" \
  bash -c "grep -q '^NSpid:.*[[:space:]]1$' /proc/$pid/status"
check "copy counts on" wait_for 10 grep -q "Counter: $((at_dump + 3))" "$T/copy1.out"
first=$(grep -o 'Counter: [0-9]*' "$T/copy1.out" | head -n1 | grep -o '[0-9]*')
check "copy continues from the dumped value (first $first, between $before_dump and $at_dump)" \
  test "$first" -le "$at_dump" -a "$first" -ge "$before_dump"
check "copy never restarts from 0" test "$(count_lines "$T/copy1.out" "Counter: 0$")" = 0

"$CEDANA" kill --wait "$w" >/dev/null
"$CEDANA" kill --wait "$r1" >/dev/null
check "original killed" wait_for 10 is_status "$w" exited
r2=$(restore_id --label lr --output "$T/copy2.out")
check "restore after the original was killed" test -n "$r2"
check "second copy counts on" wait_for 10 at_least "$T/copy2.out" "Counter: " $((at_dump + 3))
"$CEDANA" kill "$r2" >/dev/null
finish
