#!/bin/bash
# Keeps a regular file open and appends to it: CRIU must restore the open file at its offset.
# Usage: appender.sh FILE
exec 3>>"$1"
for ((i = 0; ; i++)); do
  echo "line $i" >&3
  echo "appended $i"
  sleep "${APPEND_SLEEP:-0.2}"
done
