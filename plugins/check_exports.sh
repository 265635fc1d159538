#!/bin/bash
# check_exports.sh PLUGIN.so SYMBOL...: fails unless the plugin's dynamic symbol table defines
# exactly SYMBOL... (docs/architecture.md, "Code conventions"). Linker-made symbols that carry no code (_init, _fini) are
# tolerated; anything else is an accidental export that SLURM's process would see.
set -euo pipefail
so="$1"; shift
expected=$(printf '%s\n' "$@" | sort -u)
actual=$(nm -D --defined-only --format=posix "$so" | awk '{print $1}' \
  | grep -vxE '_init|_fini' | sort -u)
if [[ "$actual" != "$expected" ]]; then
  echo "$so: exported symbols differ from the expected set" >&2
  diff <(echo "$expected") <(echo "$actual") | sed 's/^</missing:/; s/^>/unexpected:/' >&2 || true
  exit 1
fi
echo "$so: exports exactly: $(echo $expected)"
