#!/bin/bash
# run_as_user.sh USER COMMAND...: runs a unit test binary as USER (created here when missing),
# for the cases that root would pass without testing anything (root ignores file permissions).
# Fails when GoogleTest skipped a test or ran none, so that the case cannot pass unrun.
set -uo pipefail
user=$1; shift
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user" 2>/dev/null || id "$user" >/dev/null
out=$(cd /tmp && runuser -u "$user" -- "$@" 2>&1); rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || exit $rc
if grep -q '\[  SKIPPED \]' <<<"$out" || ! grep -q '\[  PASSED  \] [1-9]' <<<"$out"; then
  echo "run_as_user.sh: a test was skipped or none ran as $user" >&2
  exit 1
fi
