#!/bin/bash
# Deduplicated checkpoints (checkpoint.dedup), through `cedana dump` and `cedana restore`, in a
# local checkpoint dir and (through tests/s3/with_rgw.sh) in S3: a second checkpoint of a
# workload whose memory did not change stores almost no chunks; deleting the first, and
# retention, keep every chunk the others name; a restore of each is exact (memstate checks its
# own checksum); an altered chunk is refused, naming it, and the checkpoint is kept; deleting
# the last checkpoint of a label leaves no chunk behind. With the argument "direct", the same
# with checkpoint.direct: the pages are cut into chunks as CRIU hands them over.
source "$(dirname "$0")/lib.sh"
DIRECT=0
[ "${1:-}" = direct ] && DIRECT=1
MIB=${MEMSTATE_MIB:-256}
if [[ $CEDANA_CHECKPOINT_DIR == s3://* ]]; then
  source "$ROOT/tests/s3/rgw.sh"
  BUCKET=${CEDANA_CHECKPOINT_DIR#s3://}
  PREFIX=${BUCKET#*/}
  BUCKET=${BUCKET%%/*}
fi
start_daemon CEDANA_CHECKPOINT_DEDUP=1 CEDANA_CHECKPOINT_KEEP=2 CEDANA_CHECKPOINT_DIRECT=$DIRECT || exit 1

last_dump_line() { grep " dump: checkpoint " "$T/daemon.log" | tail -n1; }
# chunks LABEL: the digests of the label's stored chunks, one a line.
chunks() {
  if [ -n "${BUCKET:-}" ]; then
    s3_list "$BUCKET" "$PREFIX/root/$1/.chunks/" | sed 's|.*/||'
  else
    ls "$CEDANA_CHECKPOINT_DIR/root/$1/.chunks" 2>/dev/null | grep -v '^\.part-'
  fi
}
chunk_count() { chunks "$1" | grep -c . || true; }
# new_and_all: "NEW ALL" chunks of the last dump, from its log line.
new_and_all() { last_dump_line | grep -o 'deduplicated: [0-9]* of [0-9]*' | awk '{print $2, $4}'; }
# alter_chunk LABEL DIGEST: flips the last byte of one stored chunk.
alter_chunk() {
  local f=$T/chunk
  if [ -n "${BUCKET:-}" ]; then
    s3_get "$BUCKET/$PREFIX/root/$1/.chunks/$2" -o "$f" || return 1
  else
    cp "$CEDANA_CHECKPOINT_DIR/root/$1/.chunks/$2" "$f" || return 1
  fi
  python3 - "$f" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-1] ^= 0xFF
open(p, "wb").write(b)
EOF
  if [ -n "${BUCKET:-}" ]; then
    s3_put_file "$BUCKET/$PREFIX/root/$1/.chunks/$2" "$f"
  else
    cp "$f" "$CEDANA_CHECKPOINT_DIR/root/$1/.chunks/$2"
  fi
}
restore_and_check() { # tag checkpoint flag
  check_memstate_restore "$@"
  rm -f "$3"
}

w=$("$CEDANA" run --label dd --output "$T/dd.out" -- "$MEMSTATE" "$MIB" "$T/dd.flag" 0 2>/dev/null)
wait_for 120 lines_at_least "$T/dd.out" ready 1 || fail "workload never got ready"

ck1=$(dump_id "$w" --leave-running --compression zstd --streams 2)
check "first: dump" test -n "$ck1"
read -r new1 all1 <<<"$(new_and_all)"
check "first: the dump was deduplicated (${new1:-?} of ${all1:-?} chunks new)" \
  test -n "$all1" -a "${new1:-0}" = "${all1:-x}"
check "first: every chunk is stored once ($(chunk_count dd) stored)" test "$(chunk_count dd)" = "$all1"
if [ "$DIRECT" = 1 ]; then
  check "first: a direct dump, its pages cut into chunks as CRIU handed them over" \
    grep -q ', direct, .*deduplicated: ' <<<"$(last_dump_line)"
fi

ck2=$(dump_id "$w" --leave-running --compression zstd --streams 2)
check "second: dump" test -n "$ck2"
read -r new2 all2 <<<"$(new_and_all)"
# The workload only ticks: its stack and a counter page change, its MIB of state does not.
check "second: at most 2 of ${all2:-?} chunks are new (${new2:-?})" \
  test -n "$new2" -a "${new2:-99}" -le 2
check "second: only the new chunks were added" \
  test "$(chunk_count dd)" = "$((all1 + ${new2:-0}))"

check "first checkpoint deleted" "$CEDANA" checkpoints delete "$ck1" >/dev/null
check "the chunks the second names are kept ($(chunk_count dd) of $all2)" \
  test "$(chunk_count dd)" -ge "${all2:-999999}"

ck3=$(dump_id "$w" --leave-running --compression lz4 --streams 1)
ck4=$(dump_id "$w" --leave-running --compression lz4 --streams 1)
check "third and fourth: dumps" test -n "$ck3" -a -n "$ck4"
check "retention (keep 2) removed the second checkpoint" \
  bash -c "! '$CEDANA' checkpoints --json | grep -q '\"$ck2\"'"
"$CEDANA" kill "$w" >/dev/null 2>&1
# is_status is a function of lib.sh: a `bash -c` would not have it (and would always succeed).
not_running() { ! is_status "$1" running; }
check "original workload stopped" wait_for 30 not_running "$w"

restore_and_check third "$ck3" "$T/dd.flag"
check "a deduplicated checkpoint restores directly, its pages read from the chunks" \
  grep -q "restored as workload .*(pid [0-9]*, direct" "$T/daemon.log"
if [ -z "${BUCKET:-}" ]; then
  # memstate's pages do not compress: every chunk is stored raw, in a file CRIU can read.
  check "the pages, all in raw chunks in a local dir, were read in place from the chunk files" \
    grep -q "restored as workload .*, 1 images read in place)" "$T/daemon.log"
fi

# An altered chunk: the restore is refused naming the chunk; the checkpoint stays.
victim=$(chunks dd | head -n1)
check "a chunk altered in the store" alter_chunk dd "$victim"
out=$("$CEDANA" restore "$ck4" 2>&1)
check "the altered chunk: the restore fails" test $? -ne 0
check "the altered chunk: the error names the chunk and the mismatch" \
  grep -q "chunk $victim of label dd: checksum mismatch" <<<"$out"
if [ -z "${BUCKET:-}" ]; then
  # Read in place, the altered chunk reached the stopped tree before its check failed.
  check "the altered chunk: the tree it was read into was killed before it ran" \
    grep -q "killed before it ran: .*chunk $victim of label dd: checksum mismatch" "$T/daemon.log"
fi
check "the altered chunk: the checkpoint is still listed" \
  bash -c "'$CEDANA' checkpoints --json | grep -q '\"$ck4\"'"

check "the third and fourth checkpoints deleted" \
  bash -c "'$CEDANA' checkpoints delete '$ck3' >/dev/null && '$CEDANA' checkpoints delete '$ck4' >/dev/null"
check "no chunk of the label left once its checkpoints are deleted ($(chunk_count dd) left)" \
  test "$(chunk_count dd)" = 0

# A tree of more processes than cores, its chunks compressed: CRIU keeps every core busy, and
# chunks decoded one by one into its pipes would slow it down, so the pages are written into the
# images dir first and the restore is plain. With no more processes than cores it is direct.
tree_children=$(($(nproc) + 1))
w=$("$CEDANA" run --label ddtree --output "$T/ddtree.out" -- \
  "$MEMSTATE" $((tree_children * 16)) "$T/ddtree.flag" "$tree_children" compressible 2>/dev/null)
check "tree: workload ready" wait_for 120 lines_at_least "$T/ddtree.out" ready "$tree_children"
ck5=$(dump_id "$w" --compression zstd --streams 2)
check "tree: dump" test -n "$ck5"
check "tree: original workload stopped" wait_for 30 not_running "$w"
restore_and_check tree "$ck5" "$T/ddtree.flag"
check "tree: $((tree_children + 1)) processes on $(nproc) cores were restored after a full unpack" \
  bash -c "grep 'restored as workload' '$T/daemon.log' | tail -n1 | grep -q '(pid [0-9]*, unpack'"
check "tree: checkpoint deleted" "$CEDANA" checkpoints delete "$ck5" >/dev/null
finish
