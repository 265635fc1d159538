#!/bin/bash
# The seeds' counter workload (victim.sbatch / counting.sbatch), with the sleep adjustable so
# that tests run quickly: COUNTER_SLEEP (default 1), COUNTER_MAX (default 600).
echo "Starting counter job on $(hostname)..."
# COUNTER_NO_CHILD=1 waits with bash's own `read -t` on a fifo instead of a `sleep` child, so
# that the tree stays one process (a test that freezes it must not see children exit).
if [ -n "${COUNTER_NO_CHILD:-}" ]; then
  fifo=$(mktemp -u) && mkfifo "$fifo" && exec 3<>"$fifo" && rm -f "$fifo"
  pause() { read -r -t "${COUNTER_SLEEP:-1}" -u 3 || true; }
else
  pause() { sleep "${COUNTER_SLEEP:-1}"; }
fi
for ((i = 0; i <= ${COUNTER_MAX:-600}; i++)); do
  echo "Counter: $i"
  pause
done
