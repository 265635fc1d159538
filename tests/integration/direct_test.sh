#!/bin/bash
# Direct dumps (checkpoint.direct): CRIU hands its image files to the daemon through its
# image streamer, within checkpoint.memory_limit_mib. A 1 GiB workload checks its own state
# after the round trip; a store that fails mid-stream (a full checkpoint dir) leaves the
# workload running and thawed with nothing committed; the default path (direct dumps off: an
# images dir packed after CRIU) round-trips and fails as cleanly.
source "$(dirname "$0")/lib.sh"
MIB=${MEMSTATE_MIB:-1024}
# Each committed dump pauses 3 s before it ends, its images dir still in the work dir, so that
# the test can look into it (common/fault_point.h).
start_daemon CEDANA_CHECKPOINT_DIRECT=1 CEDANA_CHECKPOINT_MEMORY_LIMIT_MIB=64 \
  CEDANA_TEST_PAUSE_AT=dump:committed:3 || exit 1

engine_state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
last_dump_line() { grep " dump: checkpoint " "$T/daemon.log" | tail -n1; }
paused_after_commit() { grep -q "test: paused at dump:committed " "$T/daemon.log"; }

start_memstate() { # tag mib -> workload id
  local w
  w=$("$CEDANA" run --label "$1" --output "$T/$1.out" -- "$MEMSTATE" "$2" "$T/$1.flag" 0 2>/dev/null)
  wait_for 120 lines_at_least "$T/$1.out" ready 1 || fail "$1: workload never got ready"
  echo "$w"
}
restore_and_check() { # tag checkpoint
  check_memstate_restore "$1" "$2" "$T/$1.flag"
  check "$1: checkpoint deleted" "$CEDANA" checkpoints delete "$2" >/dev/null
}

# 1 GiB through 64 MiB of memory: CRIU waits for the store, the round trip is exact.
w=$(start_memstate big "$MIB")
dump_id "$w" --compression zstd --streams 4 >"$T/big.ck" &
dump_cli=$!
check "big: the dump paused after its commit" wait_for 120 paused_after_commit
check "big: its images dir is still in the work dir then" bash -c "[ -n \"\$(ls '$T/work')\" ]"
check "big: no pages image written to the work dir" bash -c "[ -z \"\$(find '$T/work' -name 'pages-*')\" ]"
wait "$dump_cli"
ck=$(cat "$T/big.ck")
check "big: direct dump" test -n "$ck"
line=$(last_dump_line)
check "big: the dump was direct" grep -q ", direct," <<<"$line"
peak=$(grep -o 'peak buffer [0-9]*' <<<"$line" | grep -o '[0-9]*$')
# 64 MiB of the limit are the daemon's own; the buffers get at least one 32 MiB part.
check "big: peak buffer ${peak:-?} MiB within the 32 MiB the 64 MiB limit leaves for buffers" \
  test -n "$peak" -a "${peak:-999}" -le 32
restore_and_check big "$ck"
check "big: a direct dump's checkpoint (CRIU's order, no heads) restores after a full unpack" \
  grep -q "restored as workload .*(pid [0-9]*, unpack" "$T/daemon.log"

# The store fails mid-stream: a checkpoint dir with room for a part of the images.
mkdir -p "$T/small"
mount -t tmpfs -o size=48m tmpfs "$T/small" && CLEANUPS+=("umount '$T/small'")
# full_store_case TAG: a dump into the small dir fails cleanly, and the next one works.
full_store_case() {
  local tag=$1 w out pid ck
  w=$(start_memstate "$tag" 256)
  out=$("$CEDANA" dump "$w" --dir "$T/small" --compression none --streams 2 2>&1)
  check "$tag: the dump fails" test $? -ne 0
  check "$tag: the error names the cause" grep -q "No space left on device" <<<"$out"
  check "$tag: the error names the full dir, the space needed and what is free" \
    grep -q "checkpoint dir $T/small is full (about [0-9]* MiB needed, [0-9]* MiB free" <<<"$out"
  pid=$(wl_field "$w" pid)
  check "$tag: workload still running" is_status "$w" running
  check "$tag: workload not left stopped" test "$(engine_state "$pid")" != T
  check "$tag: nothing committed or left in the checkpoint dir" \
    bash -c "[ -z \"\$(find '$T/small' -name manifest.json)\" ] && [ -z \"\$(find '$T/small' -type f)\" ]"
  check "$tag: no images dir left in the work dir" wait_for 10 work_dir_empty
  ck=$(dump_id "$w" --compression lz4 --streams 2)
  check "$tag: the workload dumps fine afterwards" test -n "$ck"
  restore_and_check "$tag" "$ck"
}
full_store_case full

# Direct dumps off (the default): CRIU writes an images dir, which is packed afterwards.
stop_daemon
start_daemon CEDANA_CHECKPOINT_DIRECT=0 || exit 1
w=$(start_memstate off 256)
ck=$(dump_id "$w" --compression zstd --streams 2)
check "off: dump" test -n "$ck"
check "off: the dump was not direct" bash -c "! grep -q ', direct,' <<<\"$(last_dump_line)\""
restore_and_check off "$ck"
check "off: its checkpoint restores direct" grep -q "restored as workload .*(pid [0-9]*, direct" "$T/daemon.log"
full_store_case off-full
check "off: the daemon removed the dumps' and restores' images dirs as theirs, not as leftovers" \
  bash -c "! grep -q 'images dirs no dump or restore uses' '$T/daemon.log'"

# restore_under TAG WORK_DIR: a default dump restored by a daemon whose checkpoint.work_dir is
# WORK_DIR (restarted so); sets ck.
restore_under() {
  stop_daemon
  start_daemon CEDANA_CHECKPOINT_DIRECT=0 CEDANA_CHECKPOINT_WORK_DIR="$2" || exit 1
  w=$(start_memstate "$1" 64)
  ck=$(dump_id "$w" --compression lz4 --streams 2)
  check "$1: dump (work dir of ${#2} bytes)" test -n "$ck"
  restore_and_check "$1" "$ck"
}

# A work dir of 64 bytes: a restore's images dir is not named after the checkpoint, so CRIU's
# socket in it still fits (with the id in its name, 46 bytes was the most).
restore_under mid-work "$T/$(head -c $((63 - ${#T})) /dev/zero | tr '\0' w)"
check "mid-work: the restore was direct" \
  grep -q "checkpoint $ck restored as workload .*(pid [0-9]*, direct" "$T/daemon.log"

# A work dir too long for CRIU's image-streamer socket: the checkpoint restores after a full
# unpack (not refused), and a direct dump says what to change.
long_work="$T/a-work-dir-whose-path-is-long-enough-to-pass-the-unix-socket-limit"
restore_under long-work "$long_work"
check "long-work: the restore says why it unpacked first" \
  grep -q "too long a path for CRIU's image streamer .*unpacking first" "$T/daemon.log"
stop_daemon
start_daemon CEDANA_CHECKPOINT_DIRECT=1 CEDANA_CHECKPOINT_WORK_DIR="$long_work" || exit 1
w=$(start_memstate long-direct 64)
out=$("$CEDANA" dump "$w" 2>&1)
check "long-work: a direct dump fails" test $? -ne 0
check "long-work: its error names the limit and checkpoint.work_dir" \
  grep -q "too long for a unix socket (at most 107): set checkpoint.work_dir to a shorter path" <<<"$out"
check "long-work: the workload still runs" is_status "$w" running
"$CEDANA" kill "$w" >/dev/null 2>&1

# A full work dir: CRIU cannot write the images; the workload runs on, nothing is left behind.
stop_daemon
mkdir -p "$T/smallwork"
mount -t tmpfs -o size=32m tmpfs "$T/smallwork" && CLEANUPS+=("umount '$T/smallwork'")
start_daemon CEDANA_CHECKPOINT_DIRECT=0 CEDANA_CHECKPOINT_WORK_DIR="$T/smallwork" || exit 1
w=$(start_memstate work-full 128)
out=$("$CEDANA" dump "$w" 2>&1)
check "work-full: the dump fails" test $? -ne 0
check "work-full: the error names the work dir, the space needed and what is free" \
  grep -q "work dir $T/smallwork is full (about [0-9]* MiB needed, [0-9]* MiB free" <<<"$out"
pid=$(wl_field "$w" pid)
check "work-full: workload still running" is_status "$w" running
check "work-full: workload not left stopped" test "$(engine_state "$pid")" != T
check "work-full: nothing committed" bash -c "[ -z \"\$(find '$CEDANA_CHECKPOINT_DIR' -name manifest.json -path '*work-full*')\" ]"
check "work-full: nothing left in the work dir" wait_for 10 work_dir_empty "$T/smallwork"
[ -n "$out" ] && ! grep -q "MiB needed" <<<"$out" && say "work-full: $out"
finish
