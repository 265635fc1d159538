#!/usr/bin/env bash
# The whole test suite: installs everything (scripts/setup.sh: packages, CRIU, build, install),
# runs the unit tests once more under ASan/UBSan, then every suite through ctest: unit,
# integration (real CRIU) and SLURM end to end (a real cluster), two at a time where safe.
# CEDANA_SKIP_SANITIZERS=1 skips the sanitizer build (it takes a few minutes). After it, the
# fuzz targets run CEDANA_FUZZ_SECONDS (60) each under clang (scripts/fuzz.sh, about 4 minutes
# with the build); CEDANA_SKIP_FUZZ=1 skips them.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${CEDANA_BUILD_DIR:-$ROOT/build}

bash "$ROOT/scripts/setup.sh"

if [ "${CEDANA_SKIP_SANITIZERS:-0}" != 1 ]; then
  printf '\033[1mtest:\033[0m unit tests under ASan/UBSan (%s)\n' "$ROOT/build-asan" >&2
  cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCEDANA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build "$ROOT/build-asan" -j"$(nproc)"
  (cd "$ROOT/build-asan" && ctest -L unit --output-on-failure -j2)
fi

if [ "${CEDANA_SKIP_FUZZ:-0}" != 1 ]; then
  printf '\033[1mtest:\033[0m fuzz targets, %ss each (%s)\n' "${CEDANA_FUZZ_SECONDS:-60}" "$ROOT/build-fuzz" >&2
  bash "$ROOT/scripts/fuzz.sh"
fi

printf '\033[1mtest:\033[0m all suites\n' >&2
cd "$BUILD_DIR"
ctest --output-on-failure -j2 --timeout 1500 "$@"
