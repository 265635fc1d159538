#!/usr/bin/env bash
# Fuzzing (docs/testing.md): builds the libFuzzer targets of tests/fuzz with clang, ASan and
# UBSan in build-fuzz/, then runs each for CEDANA_FUZZ_SECONDS (default 60) on a copy of its
# checked-in corpus (tests/fuzz/corpus/<target>/: seeds and every input that once crashed).
# New corpus entries go to a temp dir, never into the repo. Exits non-zero when a target
# crashes, leaks, hangs or hits UB, and prints where the crashing input was saved: copy it
# into tests/fuzz/corpus/<target>/ once the bug is fixed, so the unit test fuzz_corpus_test
# replays it from then on.
#   scripts/fuzz.sh                    every target
#   scripts/fuzz.sh manifest config    only these
# Environment: CEDANA_FUZZ_SECONDS, CEDANA_FUZZ_BUILD_DIR (default build-fuzz),
# CEDANA_FUZZ_ARTIFACTS (where crashing inputs go; default a temp dir that is kept).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${CEDANA_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_PER_TARGET=${CEDANA_FUZZ_SECONDS:-60}
# Longer inputs only slow the mutations down; the big regression inputs are still replayed
# whole by fuzz_corpus_test.
MAX_LEN=8192
# One input running this long is a hang (the fuzzer saves it as timeout-*).
TIMEOUT_PER_INPUT=10
ALL_TARGETS=(config manifest daemon_request)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")

log() { printf '\033[1mfuzz:\033[0m %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

for target in "${TARGETS[@]}"; do
  [ -d "$ROOT/tests/fuzz/corpus/$target" ] || die "unknown target $target (known: ${ALL_TARGETS[*]})"
done
command -v clang++ >/dev/null || die "clang++ not found (scripts/setup.sh installs clang)"

# The build lock is shared with everyone building on this machine (two cores).
with_build_lock() { if command -v flock >/dev/null; then flock /tmp/cedana-build.lock "$@"; else "$@"; fi; }

log "building ${TARGETS[*]} in $BUILD_DIR (clang, libFuzzer, ASan, UBSan)"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCEDANA_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
with_build_lock cmake --build "$BUILD_DIR" -j"$(nproc)" --target "${TARGETS[@]/#/fuzz_}"

WORK=$(mktemp -d /tmp/cedana-fuzz.XXXXXX)
ARTIFACTS=${CEDANA_FUZZ_ARTIFACTS:-$WORK/artifacts}
mkdir -p "$ARTIFACTS"
failed=()
for target in "${TARGETS[@]}"; do
  corpus="$WORK/corpus-$target"
  mkdir -p "$corpus"
  cp "$ROOT/tests/fuzz/corpus/$target"/* "$corpus/"
  dict=()
  [ -f "$ROOT/tests/fuzz/dict/$target.dict" ] && dict=(-dict="$ROOT/tests/fuzz/dict/$target.dict")
  log "$target: ${SECONDS_PER_TARGET}s on $(ls "$corpus" | wc -l) seed inputs (log $WORK/$target.log)"
  # ASan's leak check stays on: a leak is a finding too.
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$BUILD_DIR/tests/fuzz/fuzz_$target" "${dict[@]}" -max_total_time="$SECONDS_PER_TARGET" \
      -max_len="$MAX_LEN" -timeout="$TIMEOUT_PER_INPUT" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$ARTIFACTS/$target-" "$corpus" >"$WORK/$target.log" 2>&1; then
    stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' \
      "$WORK/$target.log" | sed 's/^stat:://' | tr -s ' \n' ' ')
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$WORK/$target.log" | tail -1)
    log "$target: ok ($cov; $stats)"
  else
    failed+=("$target")
    grep -E 'ERROR: |SUMMARY: |fuzz check failed|Test unit written to' "$WORK/$target.log" >&2 || tail -20 "$WORK/$target.log" >&2
    log "$target: FAILED; crashing input saved as $(ls "$ARTIFACTS/$target-"* 2>/dev/null | tr '\n' ' ')"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  log "failed: ${failed[*]}; logs and inputs in $WORK (kept). Reproduce with"
  log "  $BUILD_DIR/tests/fuzz/fuzz_<target> <input>"
  exit 1
fi
rm -rf "$WORK"
log "all targets ran ${SECONDS_PER_TARGET}s without a finding"
