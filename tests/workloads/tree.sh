#!/bin/bash
# A process tree: this shell, a producer and a consumer child joined by a pipe. The consumer
# prints what it got, so a restore that broke the pipe or lost buffered data shows as a gap.
echo "tree: started"
producer() { for ((i = 0; i < 100000; i++)); do echo "$i"; sleep "${TREE_SLEEP:-0.2}"; done; }
consumer() { while read -r n; do echo "got $n"; done; }
producer | consumer
