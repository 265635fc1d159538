#!/bin/bash
# The seeds' counter workload (victim.sbatch / counting.sbatch), with the sleep adjustable so
# that tests run quickly: COUNTER_SLEEP (default 1), COUNTER_MAX (default 600).
echo "Starting counter job on $(hostname)..."
for ((i = 0; i <= ${COUNTER_MAX:-600}; i++)); do
  echo "Counter: $i"
  sleep "${COUNTER_SLEEP:-1}"
done
