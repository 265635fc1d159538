#!/usr/bin/env bash
# check_spawns.sh [ROOT]: fails when code outside src/common/subprocess.cc starts a process by
# hand (fork, clone, posix_spawn, popen, system). Every child of ours goes through that one
# helper: its environment and fds prepared before the fork, only async-signal-safe calls after
# it, failures before exec reported by name. Tests may fork their own fixtures.
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$ROOT"
pattern='(::|[^[:alnum:]_.>])(v?fork|posix_spawnp?|popen|system)[[:space:]]*\(|SYS_clone'
found=$(grep -rnE "$pattern" src plugins --include='*.cc' --include='*.h' \
          | grep -vE '^src/common/subprocess\.(cc|h):|_test\.cc:|_for_test\.h:' \
          | grep -vE ':[0-9]+:[[:space:]]*//' || true)
if [ -n "$found" ]; then
  printf 'check_spawns: processes started by hand; use subprocess::Start/Run/ForkRunning (src/common/subprocess.h):\n%s\n' "$found" >&2
  exit 1
fi
echo "check_spawns: every process is started through src/common/subprocess"
