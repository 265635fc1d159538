#!/bin/bash
# kill_workloads.sh STATE_DIR: SIGKILLs the workloads a test's node daemon still records as
# running (by the pids in STATE_DIR/workloads/*/state.json), for the test harnesses' cleanup.
python3 - "$1/workloads" <<'PY' 2>/dev/null | xargs -r kill -9 2>/dev/null
import json, os, sys
root = sys.argv[1]
for d in os.listdir(root) if os.path.isdir(root) else []:
    try:
        s = json.load(open(os.path.join(root, d, "state.json")))
    except Exception:
        continue
    if s.get("status") == "running" and s.get("pid"):
        print(s["pid"])
PY
exit 0
