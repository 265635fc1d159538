#!/bin/bash
# make_bundle.sh PREFIX OUT_DIR: packs the node side installed under PREFIX (bin/cedana,
# bin/cedana-slurm, share/cedana/plugins/slurm/) into OUT_DIR/<version>.tar.gz, the bundle the
# controller's web installer hands out (GET /v1/install/bundle/<version>.tar.gz).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: make_bundle.sh PREFIX OUT_DIR" >&2; exit 2; }
prefix=$1 out=$2
for f in bin/cedana bin/cedana-slurm share/cedana/plugins/slurm; do
  [ -e "$prefix/$f" ] || { echo "make_bundle.sh: $prefix/$f is missing (cmake --install first)" >&2; exit 1; }
done
version=$("$prefix/bin/cedana" version | awk 'NR == 1 {print $2}')
mkdir -p "$out"
tmp=$(mktemp "$out/.bundle.XXXXXX")
tar -czf "$tmp" -C "$prefix" bin/cedana bin/cedana-slurm share/cedana/plugins/slurm
mv "$tmp" "$out/$version.tar.gz"
echo "$out/$version.tar.gz"
