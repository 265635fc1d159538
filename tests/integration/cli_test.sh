#!/bin/bash
# The CLI around dump and restore: --attach, --pid, checkpoint listing, deletion and
# retention, version --init-config and config show.
source "$(dirname "$0")/lib.sh"
export CEDANA_CHECKPOINT_KEEP=2
# The daemon's metrics port (daemon.metrics_port), scraped below.
METRICS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export CEDANA_DAEMON_METRICS_PORT=$METRICS_PORT
start_daemon || exit 1

# run --attach streams the output and exits with the workload's status.
out=$("$CEDANA" run --attach -- bash -c 'echo hello from the workload; exit 7' 2>/dev/null)
check "run --attach exits with the workload's status" test $? = 7
check "run --attach streams the output" grep -q "hello from the workload" <<<"$out"

# dump --pid: a process tree the daemon did not start (a shell job writing to a file).
# It runs under a small reaper: on machines whose pid 1 does not reap orphans (like these
# VMs), the killed tree's zombies would otherwise keep its pids, and CRIU restores pids as they
# were (no PID namespace for a process we did not start). The child starts its own session:
# CRIU cannot dump a tree whose session leader is in another PID namespace (as in CI runners).
python3 - "$T/pid.child" <<'PY' >"$T/pid.out" 2>&1 &
import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
child = os.fork()
if child == 0:
    os.setsid()
    os.closerange(3, 1024)  # only what a fresh program would have
    os.execvp("bash", ["bash", "-c", 'for ((i = 0; ; i++)); do echo "tick $i"; sleep 0.1; done'])
open(sys.argv[1], "w").write(str(child))
while True:
    try:
        os.wait()
    except ChildProcessError:
        import time; time.sleep(0.2)
PY
reaper=$!
CLEANUPS+=("kill $reaper")
wait_for 10 test -s "$T/pid.child"
pid=$(cat "$T/pid.child")
wait_for 10 at_least "$T/pid.out" "tick " 3
ck=$(dump_id --pid "$pid" --label pidjob)
check "dump --pid" test -n "$ck"
check "the dumped process is gone" wait_for 5 bash -c "! kill -0 $pid 2>/dev/null"
n=$(last_number "$T/pid.out" "tick ")
r=$(restore_id "$ck")
check "restore of a --pid checkpoint" test -n "$r"
check "it goes on writing its file" wait_for 10 at_least "$T/pid.out" "tick " $((n + 3))
check "without a gap or repeat" sequence_ok "$T/pid.out" "tick "
"$CEDANA" kill "$r" >/dev/null

# dump --profile: how long each phase of the checkpoint took, as JSON.
w=$("$CEDANA" run --label profiled --output "$T/profiled.out" -- "$WORKLOADS/counter.sh" 2>/dev/null)
wait_for 10 at_least "$T/profiled.out" "Counter: " 2
ck=$(dump_id "$w" --leave-running --profile "$T/profile.json")
check "dump --profile writes the checkpoint's phases in the order they ran" python3 - "$T/profile.json" "$ck" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["operation"] == "dump" and p["checkpoint_id"] == sys.argv[2], p
names = [x["phase"] for x in p["phases"]]
assert names == ["queue", "prepare", "freeze", "store", "commit", "finish"], names
ms = {x["phase"]: x["ms"] for x in p["phases"]}
assert all(v >= 0 for v in ms.values()), ms
assert ms["freeze"] >= 1 and ms["freeze"] <= p["frozen_ms"], (ms, p["frozen_ms"])
assert ms["prepare"] + ms["freeze"] + ms["store"] <= p["total_ms"] + 1, (ms, p["total_ms"])
assert p["stored_bytes"] > 0, p
PY
out=$("$CEDANA" dump "$w" --leave-running --profile "$T/no-such-dir/profile.json" 2>&1); rc=$?
check "a profile that cannot be written is an error naming it" grep -q "writing the profile $T/no-such-dir/profile.json" <<<"$out"
check "after the checkpoint's id (the checkpoint is made)" bash -c "test $rc != 0 && grep -Eq '^[0-9]{8}-[0-9]{6}-' <<<'$out'"
"$CEDANA" kill "$w" >/dev/null

# The node daemon's /metrics: what it did since it started (daemon/node_metrics.h). So far: the
# dumps above (manual), one restore, and now a dump refused (no such workload).
"$CEDANA" dump no-such-workload >/dev/null 2>&1
metrics=$(curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics")
check "metrics: manual dumps counted by result" \
  grep -Eq '^cedana_node_dumps_total\{result="ok",reason="manual"\} [3-9]' <<<"$metrics"
check "metrics: the refused dump, by cause" \
  grep -Eq '^cedana_node_refusals_total\{operation="dump",cause="not_found"\} 1$' <<<"$metrics"
check "metrics: restores by result and the reason of the checkpoint they resumed" \
  grep -Eq '^cedana_node_restores_total\{result="ok",reason="manual"\} [1-9]' <<<"$metrics"
check "metrics: bytes stored" grep -Eq '^cedana_node_stored_bytes_total [1-9][0-9]*$' <<<"$metrics"
check "metrics: each phase of a dump and of a restore as a histogram" python3 -c '
import re, sys
seen = set(re.findall(r"^cedana_node_phase_duration_seconds_count\{operation=\"(\w+)\",phase=\"(\w+)\"\} [1-9]", sys.argv[1], re.M))
want = {("dump", p) for p in "queue prepare freeze store commit finish".split()}
want |= {("restore", p) for p in "unpack prepare restore verify".split()}
sys.exit(0 if want <= seen else print(sorted(want - seen)) or 1)' "$metrics"
check "metrics: only on loopback, and only /metrics" \
  bash -c "! curl -fsS http://127.0.0.1:$METRICS_PORT/ >/dev/null 2>&1 && ! ss -ltn | grep -q '0.0.0.0:$METRICS_PORT '"

# dump --pid of a managed workload's root pid (the pid `cedana ps` shows) dumps that workload,
# with its label; a pid inside a workload is refused, naming the workload.
# The workload keeps one long-lived child: the counter's own `sleep 0.1` children may be gone
# by the time the dump asks for them.
w=$(COUNTER_SLEEP=0.1 "$CEDANA" run --label managed-by-pid --output "$T/managed.out" -- \
  bash -c 'sleep 600 & exec "$0"' "$WORKLOADS/counter.sh" 2>/dev/null)
wait_for 10 at_least "$T/managed.out" "Counter: " 3
root_pid=$(wl_field "$w" pid)
child=$(pgrep -P "$root_pid" -f '^sleep 600$')
out=$("$CEDANA" dump --pid "${child:-0}" 2>&1)
check "dump --pid of a process inside a workload is refused, naming the workload" \
  grep -q "is a process of workload $w .*cedana dump $w" <<<"$out"
check "the workload runs on after the refusal" is_status "$w" running
ck=$(dump_id --pid "$root_pid")
check "dump --pid of a workload's root pid" test -n "$ck"
check "its checkpoint has the workload's label" \
  bash -c "'$CEDANA' checkpoints --label managed-by-pid | grep -q '$ck'"
check "the workload is recorded as checkpointed" wait_for 5 is_status "$w" checkpointed
n=$(last_number "$T/managed.out" "Counter: ")
r=$(restore_id --label managed-by-pid)
check "restore --label finds it" test -n "$r"
check "the restored workload counts on from where it was" \
  wait_for 10 at_least "$T/managed.out" "Counter: " $((n + 3))
[ -n "$r" ] && "$CEDANA" kill "$r" >/dev/null

# checkpoints: listing, retention (keep 2), delete.
w=$("$CEDANA" run --label keep -- "$WORKLOADS/counter.sh" 2>/dev/null)
for i in 1 2 3; do dump_id "$w" --leave-running >/dev/null; sleep 1.1; done
list=$("$CEDANA" checkpoints --label keep)
check "checkpoints lists the label" grep -q keep <<<"$list"
check "retention kept the newest 2 of 3" test "$(grep -c ' keep ' <<<"$list")" = 2
check "each listed as good" test "$(grep -c ' good$' <<<"$list")" = 2
newest=$("$CEDANA" checkpoints --label keep --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
# Cedana's forms of the commands (docs/configuration.md, "Coming from Cedana").
check "job list (Cedana's form) lists the workload" bash -c "'$CEDANA' job list | grep -q '$w'"
check "job inspect (Cedana's form)" bash -c "'$CEDANA' job inspect '$w' | grep -q '\"status\": \"running\"'"
check "checkpoint list (Cedana's form)" bash -c "'$CEDANA' checkpoint list --label keep | grep -q '$newest'"
inspected=$("$CEDANA" checkpoint inspect "$newest" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "checkpoint inspect (Cedana's form) shows that checkpoint" test "$inspected" = "$newest"
r=$("$CEDANA" restore process --path "$CEDANA_CHECKPOINT_DIR/root/keep/$newest" 2>/dev/null)
check "restore process --path (Cedana's form)" test -n "$r"
check "its workload runs" wait_for 10 is_status "$r" running
[ -n "$r" ] && "$CEDANA" job kill "$r" >/dev/null
check "job kill (Cedana's form)" wait_for 10 bash -c "! '$CEDANA' ps | grep '$r' | grep -q running"
check "checkpoints delete" "$CEDANA" checkpoints delete "$newest"
check "the deleted one is gone" bash -c "! \"$CEDANA\" checkpoints --label keep | grep -q $newest"
"$CEDANA" kill "$w" >/dev/null

# version --init-config writes defaults and CEDANA_* values; config show names the sources.
CEDANA_CHECKPOINT_STREAMS=3 "$CEDANA" version --init-config >/dev/null
check "version --init-config writes the config file" test -f "$CEDANA_CONFIG"
check "with the variables given" grep -q '"streams": 3' "$CEDANA_CONFIG"
show=$("$CEDANA" config show)
check "config show: value from the file" grep -q "checkpoint.streams .* 3 .*file $CEDANA_CONFIG" <<<"$show"
check "config show: value from the environment" grep -q "checkpoint.keep .* 2 .*env CEDANA_CHECKPOINT_KEEP" <<<"$show"
out=$(CEDANA_CHECKPOINT_COMPRESSION=bzip2 "$CEDANA" config show 2>&1)
check "a bad value names the key and the valid values" \
  grep -q "checkpoint.compression: invalid value \"bzip2\" (valid: none, gzip, lz4, zstd)" <<<"$out"

# A config file as Cedana writes it: every command works; its keys are read as ours, and what
# means nothing here is ignored with a warning (docs/configuration.md, "Coming from Cedana").
cedana_config=$T/cedana-config.json
cat >"$cedana_config" <<JSON
{"log_level": "info", "metrics": true, "profiling": {"enabled": false},
 "checkpoint": {"dir": "$CEDANA_CHECKPOINT_DIR",
                "compression": "tar", "streams": 0, "stream_memory_limit": 128},
 "criu": {"binary_path": "$(command -v criu)", "leave_running": false}}
JSON
check "ps with Cedana's config" env CEDANA_CONFIG="$cedana_config" "$CEDANA" ps
show=$(CEDANA_CONFIG="$cedana_config" "$CEDANA" config show)
check "config show names Cedana's key it read" \
  grep -q "criu.binary .*file $cedana_config (Cedana's criu.binary_path)" <<<"$show"
check "config show maps Cedana's spelling" \
  grep -q "checkpoint.compression .* none .*Cedana's \"tar\"" <<<"$show"
check "config show warns of the keys it ignores" \
  grep -q "# warning: ignoring config key \"metrics\"" <<<"$show"
# --merge-config (Cedana's flag, on any command) writes the effective config back under our
# names, keeping what it ignores.
check "ps --merge-config" env CEDANA_CONFIG="$cedana_config" "$CEDANA" ps --merge-config
check "the merged file names criu.binary, not criu.binary_path" python3 -c '
import json, sys; c = json.load(open(sys.argv[1]))
assert c["criu"]["binary"] and "binary_path" not in c["criu"] and c["metrics"] is True, c' "$cedana_config"
echo '{"strict": true, "metrics": true}' >"$T/strict.json"
out=$(CEDANA_CONFIG="$T/strict.json" "$CEDANA" config show 2>&1 || true)
check "strict: an unknown key is an error" grep -q 'unknown config key "metrics"' <<<"$out"
finish
