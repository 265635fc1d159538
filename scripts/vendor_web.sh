#!/bin/bash
# vendor_web.sh: puts the web UI's charting library (Chartist, pinned in
# packaging/web/package-lock.json) into web/vendor/, where the UI imports it and from where
# `cmake --install` ships it with the UI. The UI has no bundler: Chartist's ES module build is
# one self-contained file. Skips the download when web/vendor/ already holds the locked version.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC=$ROOT/packaging/web
OUT=$ROOT/web/vendor
stamp=$(sha256sum "$SRC/package-lock.json" | cut -d' ' -f1)
[ "$(cat "$OUT/.lock-sha256" 2>/dev/null)" = "$stamp" ] && [ -s "$OUT/chartist.js" ] && exit 0
command -v npm >/dev/null || { echo "vendor_web.sh: npm is missing (scripts/setup.sh installs it)" >&2; exit 1; }
(cd "$SRC" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
  || { echo "vendor_web.sh: npm ci in $SRC failed (is the npm registry reachable?)" >&2; exit 1; }
dist=$SRC/node_modules/chartist/dist
mkdir -p "$OUT"
cp "$dist/index.js" "$OUT/chartist.js"
cp "$dist/index.css" "$OUT/chartist.css"
cp "$SRC/node_modules/chartist/LICENSE-MIT" "$OUT/chartist.LICENSE"
echo "$stamp" >"$OUT/.lock-sha256"
