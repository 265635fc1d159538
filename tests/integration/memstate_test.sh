#!/bin/bash
# A program holding 1 GiB of pseudo-random state checks its own checksum after a restore, with
# every codec and 1 and 4 streams; then a tree of 4 processes holding 256 MiB between them.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
MIB=${MEMSTATE_MIB:-1024}

roundtrip() { # tag mib children codec streams [compressible]
  local tag=$1 mib=$2 children=$3 codec=$4 streams=$5 fill=${6:-}
  local out=$T/$tag.out flag=$T/$tag.flag
  local w ck
  w=$("$CEDANA" run --label "$tag" --output "$out" -- "$MEMSTATE" "$mib" "$flag" "$children" $fill 2>/dev/null)
  local ready=$((children > 0 ? children : 1))
  wait_for 120 lines_at_least "$out" ready "$ready" || { fail "$tag: workload never got ready"; "$CEDANA" kill "$w"; return; }
  ck=$(dump_id "$w" --compression "$codec" --streams "$streams")
  check "$tag: dump" test -n "$ck"
  check_memstate_restore "$tag" "$ck" "$flag"
  check "$tag: PASS reported, no FAIL" bash -c "grep -q PASS '$out' && ! grep -q FAIL '$out'"
  STORED=$("$CEDANA" checkpoints --json | python3 -c "import sys, json
rows = json.load(sys.stdin)
rows = rows.get('checkpoints', rows) if isinstance(rows, dict) else rows
print(next(r['stored_bytes'] for r in rows if r['id'] == '$ck'))")
  # A GiB per checkpoint adds up (and an S3 test server keeps it in memory).
  check "$tag: checkpoint deleted" "$CEDANA" checkpoints delete "$ck" >/dev/null
}

for codec in none gzip lz4 zstd; do
  for streams in 1 4; do
    roundtrip "mem-$codec-x$streams" "$MIB" 0 "$codec" "$streams"
    # Random state does not compress: every codec stores it raw, and CRIU reads it in place.
    if [[ $CEDANA_CHECKPOINT_DIR != s3://* ]]; then
      check "mem-$codec-x$streams: the pages read in place" \
        bash -c "grep 'restored as workload' '$T/daemon.log' | tail -n1 | grep -q ' 1 images read in place'"
    fi
  done
done
# More processes than cores, restored directly all the same: from compressed streams as they are
# unpacked, and from streams stored uncompressed in a local dir with every pages image read in
# place. With four streams each process's 64 MiB of pages lie in two 32 MiB parts in two of them.
roundtrip "memtree-zstd-x4" 256 3 zstd 4 compressible
check "memtree-zstd-x4: restored directly (4 processes, more than the cores or not)" \
  bash -c "grep 'restored as workload' '$T/daemon.log' | tail -n1 | grep -q '(pid [0-9]*, direct, heads'"
for streams in 1 4; do
  roundtrip "memtree-none-x$streams" 256 3 none "$streams"
  if [[ $CEDANA_CHECKPOINT_DIR != s3://* ]]; then
    check "memtree-none-x$streams: a direct restore, every process's pages read in place" \
      bash -c "grep 'restored as workload' '$T/daemon.log' | tail -n1 | grep -q 'direct, heads .* 4 images read in place'"
  fi
done
# checkpoint.lz4_acceleration: lz4's fast mode stores the same memory (the workload's seed is
# fixed) in more bytes, and it restores like any other. At 64 it stored 0.9 % more of this data;
# two dumps at the same acceleration differed by less than 0.01 % (stacks, addresses).
roundtrip "lz4-accel-1" 64 0 lz4 1 compressible
default_bytes=$STORED
stop_daemon
start_daemon CEDANA_CHECKPOINT_LZ4_ACCELERATION=64 || exit 1
roundtrip "lz4-accel-64" 64 0 lz4 1 compressible
check "lz4 at acceleration 64 stores at least 0.5 % more ($STORED bytes against $default_bytes)" \
  test "$STORED" -gt $((default_bytes + default_bytes / 200))
finish
