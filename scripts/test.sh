#!/usr/bin/env bash
# The whole test suite: installs everything (scripts/setup.sh: packages, CRIU, build), then runs
# the unit tests and the integration tests (real CRIU) through ctest, two at a time.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${CEDANA_BUILD_DIR:-$ROOT/build}

bash "$ROOT/scripts/setup.sh"
cd "$BUILD_DIR"
ctest --output-on-failure -j2 --timeout 1500 "$@"
