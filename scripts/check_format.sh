#!/usr/bin/env bash
# check_format.sh [ROOT] [--fix]: fails when a C++ file of the repository differs from what
# clang-format makes of it with the repository's .clang-format (Google's style, 100 columns).
# --fix rewrites the files instead. Debian 12's clang-format (14) is the reference: another
# version may format a few constructs differently.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fix=0
for arg in "$@"; do
  case $arg in
    --fix) fix=1 ;;
    *) ROOT=$arg ;;
  esac
done
cd "$ROOT"
command -v clang-format >/dev/null ||
  { echo "check_format: clang-format is not installed (apt-get install clang-format; scripts/setup.sh does)" >&2; exit 1; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' '*.c' 2>/dev/null || find src plugins tests bench -name '*.cc' -o -name '*.h' -o -name '*.c')
if [ "$fix" = 1 ]; then
  clang-format -i --style=file "${files[@]}"
  echo "check_format: ${#files[@]} files formatted"
  exit 0
fi
# One run over every file; its warnings name the files that differ.
if clang-format --style=file --dry-run --Werror "${files[@]}" >/dev/null 2>&1; then
  echo "check_format: ${#files[@]} files match .clang-format"
  exit 0
fi
mapfile -t bad < <(clang-format --style=file --dry-run "${files[@]}" 2>&1 >/dev/null |
                     sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: .*code should be clang-formatted.*/\1/p' | sort -u)
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'check_format: %d file(s) differ from .clang-format (fix with scripts/check_format.sh --fix):\n' "${#bad[@]}" >&2
  printf '  %s\n' "${bad[@]}" >&2
  clang-format --style=file "${bad[0]}" | diff -u "${bad[0]}" - | head -20 >&2 || true
fi
exit 1
