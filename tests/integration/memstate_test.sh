#!/bin/bash
# A program holding 1 GiB of pseudo-random state checks its own checksum after a restore, with
# every codec and 1 and 4 streams; then a tree of 4 processes holding 256 MiB between them.
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
MIB=${MEMSTATE_MIB:-1024}

roundtrip() { # tag mib children codec streams
  local tag=$1 mib=$2 children=$3 codec=$4 streams=$5
  local out=$T/$tag.out flag=$T/$tag.flag
  local w ck
  w=$("$CEDANA" run --label "$tag" --output "$out" -- "$MEMSTATE" "$mib" "$flag" "$children" 2>/dev/null)
  local ready=$((children > 0 ? children : 1))
  wait_for 120 lines_at_least "$out" ready "$ready" || { fail "$tag: workload never got ready"; "$CEDANA" kill "$w"; return; }
  ck=$(dump_id "$w" --compression "$codec" --streams "$streams")
  check "$tag: dump" test -n "$ck"
  check_memstate_restore "$tag" "$ck" "$flag"
  check "$tag: PASS reported, no FAIL" bash -c "grep -q PASS '$out' && ! grep -q FAIL '$out'"
  # A GiB per checkpoint adds up (and an S3 test server keeps it in memory).
  check "$tag: checkpoint deleted" "$CEDANA" checkpoints delete "$ck" >/dev/null
}

for codec in none gzip lz4 zstd; do
  for streams in 1 4; do
    roundtrip "mem-$codec-x$streams" "$MIB" 0 "$codec" "$streams"
  done
done
roundtrip "memtree-zstd-x4" 256 3 zstd 4
# More processes than cores: restored from an unpacked images dir, unless CRIU reads every pages
# image in place (one uncompressed stream in a local dir), which costs it no copy.
roundtrip "memtree-none-x1" 256 3 none 1
if [[ $CEDANA_CHECKPOINT_DIR != s3://* ]]; then
  check "memtree-none-x1: a direct restore, every process's pages read in place" \
    grep -q "restored as workload .*direct, heads .* 4 images read in place" "$T/daemon.log"
fi
check "memtree-zstd-x4: restored after a full unpack (4 processes, 2 cores or fewer)" \
  bash -c "[ \$(nproc) -gt 2 ] || grep -q 'restored as workload .*(pid [0-9]*, unpack' '$T/daemon.log'"
finish
