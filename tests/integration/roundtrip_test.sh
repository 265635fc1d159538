#!/bin/bash
# Dump and restore, with every codec and with 1 and 4 streams, of: the seeds' counter loop, a
# process tree joined by a pipe, and a process that keeps a regular file open and appends to it.
# The restored workloads go on from the dumped values: no restart from 0, no line twice.
source "$(dirname "$0")/lib.sh"
# The daemon inherits an open file that keeps growing (as ctest's log does): it must not leak
# into workloads, or their restores would fail CRIU's file size check.
exec 9>>"$T/inherited.log"
start_daemon || exit 1
exec 9>&-
export COUNTER_SLEEP=0.1 TREE_SLEEP=0.1 APPEND_SLEEP=0.1

for codec in none gzip lz4 zstd; do
  for streams in 1 4; do
    tag="$codec-x$streams"
    c=$("$CEDANA" run --label "counter-$tag" --output "$T/counter-$tag.out" -- "$WORKLOADS/counter.sh" 2>/dev/null)
    t=$("$CEDANA" run --label "tree-$tag" --output "$T/tree-$tag.out" -- "$WORKLOADS/tree.sh" 2>/dev/null)
    a=$("$CEDANA" run --label "append-$tag" --output "$T/append-$tag.out" -- "$WORKLOADS/appender.sh" "$T/append-$tag.data" 2>/dev/null)
    wait_for 20 at_least "$T/counter-$tag.out" "Counter: " 5
    wait_for 20 at_least "$T/tree-$tag.out" "got " 5
    wait_for 20 at_least "$T/append-$tag.out" "appended " 5
    for w in "$c" "$t" "$a"; do
      ck=$(dump_id "$w" --compression "$codec" --streams "$streams")
      check "$tag: dump of $w gives a checkpoint id" test -n "$ck"
      check "$tag: $w is checkpointed (stopped)" is_status "$w" checkpointed
    done
    before_c=$(last_number "$T/counter-$tag.out" "Counter: ")
    before_t=$(last_number "$T/tree-$tag.out" "got ")
    before_a=$(last_number "$T/append-$tag.out" "appended ")
    echo "grows between dump and restore" >>"$T/inherited.log"
    sleep 0.5
    check "$tag: nothing runs after the dump" test "$(last_number "$T/counter-$tag.out" "Counter: ")" = "$before_c"
    for l in counter tree append; do
      r=$(restore_id --label "$l-$tag")
      check "$tag: restore of label $l-$tag" test -n "$r"
      eval "r_$l=$r"
    done
    check "$tag: counter goes on" wait_for 20 at_least "$T/counter-$tag.out" "Counter: " $((before_c + 5))
    check "$tag: tree goes on" wait_for 20 at_least "$T/tree-$tag.out" "got " $((before_t + 5))
    check "$tag: appender goes on" wait_for 20 at_least "$T/append-$tag.out" "appended " $((before_a + 5))
    check "$tag: the counter's restore was direct (CRIU started before the pages were unpacked)" \
      grep -q "restored as workload $r_counter (pid [0-9]*, direct" "$T/daemon.log"
    # Stored uncompressed in a local dir, the pages lie in the stored streams, where CRIU reads
    # them (in S3 there is no file CRIU could read: tests/s3/with_rgw.sh).
    if [ "$codec" = none ] && [[ $CEDANA_CHECKPOINT_DIR != s3://* ]]; then
      check "$tag: CRIU read the counter's pages in place from the stored stream" \
        grep -q "restored as workload $r_counter (pid [0-9]*, direct.* images read in place" "$T/daemon.log"
    fi
    # --wait: the output files are complete (the supervisor relays output until the end).
    for r in "$r_counter" "$r_tree" "$r_append"; do "$CEDANA" kill --wait "$r" >/dev/null; done
    check "$tag: counter sequence has no gap, repeat or restart" sequence_ok "$T/counter-$tag.out" "Counter: "
    check "$tag: counter started once" test "$(count_lines "$T/counter-$tag.out" Starting)" = 1
    check "$tag: tree sequence intact across the pipe" sequence_ok "$T/tree-$tag.out" "got "
    check "$tag: tree started once" test "$(count_lines "$T/tree-$tag.out" "tree: started")" = 1
    check "$tag: appended file intact" sequence_ok "$T/append-$tag.data" "line "
  done
done
finish
