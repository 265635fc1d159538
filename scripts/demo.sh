#!/usr/bin/env bash
# The main job: installs everything (scripts/setup.sh), starts the node daemon if it is not
# running, runs the seeds' counter loop as a managed workload, checkpoints it (which stops it),
# restores it, and shows the counter going on from where it stopped.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

bash "$ROOT/scripts/setup.sh"
CEDANA=/usr/local/bin/cedana
STARTED_DAEMON=
WORKLOAD=
cleanup() {
  [ -n "$WORKLOAD" ] && "$CEDANA" kill "$WORKLOAD" >/dev/null 2>&1 || true
  [ -n "$STARTED_DAEMON" ] && kill "$STARTED_DAEMON" 2>/dev/null || true
}
trap cleanup EXIT

if ! "$CEDANA" daemon status >/dev/null 2>&1; then
  bold "starting the node daemon (log: /var/log/cedana/daemon.log)"
  "$CEDANA" daemon start >/dev/null 2>&1 &
  STARTED_DAEMON=$!
  for _ in $(seq 50); do "$CEDANA" daemon status >/dev/null 2>&1 && break; sleep 0.2; done
fi
"$CEDANA" daemon status

WORK=$(mktemp -d /tmp/cedana-demo.XXXXXX)
cat >"$WORK/counting.sh" <<'SCRIPT'
#!/bin/bash
echo "Starting counter job on $(hostname)..."

# Loop from 0 to 600
for i in {0..600}
do
    echo "Counter: $i"
    sleep 1
done
SCRIPT
chmod +x "$WORK/counting.sh"
OUT=$WORK/counting.out

bold "cedana run --label counting -- counting.sh"
WORKLOAD=$("$CEDANA" run --label counting --output "$OUT" -- "$WORK/counting.sh")
sleep 6
"$CEDANA" ps
tail -n 3 "$OUT"

bold "cedana dump $WORKLOAD   (checkpoint, then the workload stops)"
CHECKPOINT=$("$CEDANA" dump "$WORKLOAD")
"$CEDANA" ps | grep -E "ID|$WORKLOAD"
AT_DUMP=$(grep -c "Counter:" "$OUT")
echo "last line before the dump: $(tail -n1 "$OUT")"
sleep 3
echo "3 s later, still:          $(tail -n1 "$OUT")"
"$CEDANA" checkpoints --label counting

bold "cedana restore --label counting"
WORKLOAD=$("$CEDANA" restore --label counting)
sleep 4
echo "output after the restore:"
tail -n 6 "$OUT"

FIRST_AFTER=$(sed -n "$((AT_DUMP + 1))p" "$OUT")
if [ "$(grep -c 'Counter: 0$' "$OUT")" = 1 ] && [ "$(grep -c Starting "$OUT")" = 1 ] &&
   [ "$FIRST_AFTER" = "Counter: $AT_DUMP" ]; then
  bold "OK: the counter went on from $((AT_DUMP - 1)) to ${FIRST_AFTER#Counter: } after the restore (no restart, no repeat)"
else
  bold "FAILED: the counter did not continue (see $OUT)"; exit 1
fi
