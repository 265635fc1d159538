#!/bin/bash
# The SLURM version matrix, one Debian release per run: `matrix_test.sh trixie` (SLURM 24.11)
# or `matrix_test.sh sid` (the newest SLURM in Debian). Makes or reuses that release's root
# file system (slurm_root.sh), builds cedana's node side, cedana-slurm and the plugins in it
# against that SLURM's headers and source (incrementally: the build tree is kept beside the
# root), installs them there, and runs scenario.sh in it. The host's CRIU build is used inside.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SUITE=${1:?usage: matrix_test.sh trixie|sid}
source "$HERE/slurm_root.sh"
[ -x /opt/cedana/criu/sbin/criu ] || { echo "matrix: no CRIU build at /opt/cedana/criu (scripts/setup.sh)" >&2; exit 1; }
slurm_root_make "$SUITE" || exit 1
echo "matrix: $SUITE root with SLURM $SLURM_ROOT_VERSION at $SLURM_ROOT" >&2
slurm_root_run "$SUITE" bash -c '
  set -e
  cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCEDANA_SLURM_SOURCE_ROOT=/opt/slurm-src >/build/configure.log 2>&1 || { tail -20 /build/configure.log; exit 1; }
  cmake --build /build -j"$(nproc)" --target cedana cedana-slurm spank_cedana job_submit_cedana \
    cli_filter_cedana task_cedana job_submit_cedana_test cli_filter_cedana_test >/build/build.log 2>&1 ||
    { grep -E "error|FAILED" /build/build.log | head -30; exit 1; }
  cmake --install /build --prefix /usr/local >/build/install.log 2>&1 || { tail -20 /build/install.log; exit 1; }
  # The CRIU build of the host (with its fixes), found before /usr/sbin/criu of Debian.
  ln -sf /opt/cedana/criu/sbin/criu /usr/local/bin/criu
' || { echo "matrix: building cedana against SLURM $SLURM_ROOT_VERSION failed" >&2; exit 1; }
slurm_root_run "$SUITE" bash /src/tests/slurm/matrix/scenario.sh
