#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian 12 machine, as root, and builds and
# installs the project. Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh            packages + CRIU + build + install
#   scripts/setup.sh --deps     packages + CRIU only
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CRIU_PREFIX=${CEDANA_CRIU_PREFIX:-/opt/cedana/criu}
CRIU_VERSION=4.1.1
SLURM_SRC_ROOT=${CEDANA_SLURM_SRC_ROOT:-/opt/cedana/slurm-src}
BUILD_DIR=${CEDANA_BUILD_DIR:-$ROOT/build}
export DEBIAN_FRONTEND=noninteractive

log() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and system files)"
[ -r /etc/debian_version ] || die "this script supports Debian 12 (bookworm); /etc/debian_version not found"

PACKAGES=(
  # toolchain and libraries of the project
  build-essential cmake ninja-build pkg-config git ca-certificates
  libprotobuf-dev protobuf-compiler nlohmann-json3-dev libcli11-dev
  zlib1g-dev libzstd-dev liblz4-dev libdeflate-dev libssl-dev libcurl4-openssl-dev
  libgtest-dev libgmock-dev libfmt-dev
  # BLAKE3's C sources, the checkpoint streams' digest (cmake/Blake3.cmake builds them)
  librust-blake3-dev
  # the fuzz targets (scripts/fuzz.sh): clang-14's libFuzzer and sanitizer runtimes are in
  # libclang-rt-14-dev, which clang only recommends
  clang libclang-rt-14-dev
  # the house style (.clang-format), checked by ctest lint_format (scripts/check_format.sh)
  clang-format
  # tools the tests use
  gzip zstd lz4 procps psmisc util-linux python3 xz-utils libcap2-bin
  # the benchmark's plot (bench/run_bench.py)
  python3-matplotlib
  # CRIU build dependencies
  libbsd-dev libcap-dev libgnutls28-dev libnet1-dev libnftables-dev libnl-3-dev patch
  libprotobuf-c-dev protobuf-c-compiler uuid-dev python3-protobuf pkgconf
  # the controller: HTTP server, catalog databases; PostgreSQL and Chromium for its tests
  libcpp-httplib-dev libsqlite3-dev libpq-dev postgresql chromium
  # the S3-protocol test server (radosgw on loopback, tests/s3/rgw.sh) and its client
  radosgw ceph-mon ceph-osd ceph-common curl
  # SLURM and munge for the local cluster
  slurm-wlm slurmctld slurmd slurm-client munge libslurm-dev libpmi2-0-dev
  # job accounting for the local cluster, so that tests can ask sacct (tests/slurm/accounting.sh)
  slurmdbd mariadb-server
  # nft: lifting the network lock CRIU leaves on a TCP-holding tree it left stopped
  nftables
  mmdebstrap
  # the MPIs the tests launch: MPICH (also with srun --mpi=pmi2) and OpenMPI. With both
  # installed the unsuffixed mpicc/mpirun name OpenMPI; the tests name each one (mpicc.mpich).
  mpich libmpich-dev openmpi-bin libopenmpi-dev
  # a real application for the SLURM tests: GROMACS (gmx, and gmx_mpi linked with OpenMPI)
  gromacs
)

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "debian packages: all present"; return; fi
  log "debian packages: installing ${missing[*]}"
  apt-get update -qq
  # slurm/munge packages start their services on install; we run our own instances.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d; trap - EXIT
}

criu_ok() { # $1 = criu binary; true when it is >= 4.0 and `criu check` passes
  local bin=$1 ver
  [ -x "$bin" ] || return 1
  ver=$("$bin" --version 2>/dev/null | sed -n 's/^Version: *\([0-9]*\)\..*/\1/p')
  [ -n "$ver" ] && [ "$ver" -ge 4 ] || return 1
  "$bin" check >/dev/null 2>&1
}

# Debian bookworm's criu 3.17 fails on 6.x kernels. Build trixie's criu source (source only:
# no trixie binary package is ever installed) under a prefix this project owns.
build_criu() {
  local src=/var/cache/cedana/criu-src tmp_list=/etc/apt/sources.list.d/cedana-criu-src.sources
  local uri
  uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
  [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$uri" ] || die "cannot find the Debian archive address in /etc/apt/sources.list.d/debian.sources"
  mkdir -p "$src"
  if ! ls "$src"/criu_${CRIU_VERSION}.orig.tar.* >/dev/null 2>&1; then
    log "criu: fetching the ${CRIU_VERSION} source from Debian (temporary deb-src entry)"
    cat >"$tmp_list" <<SRC
Types: deb-src
URIs: $uri
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    # Always remove the trixie entry again, whatever happens.
    trap 'rm -f "$tmp_list"; apt-get update -qq || true' RETURN
    apt-get update -qq
    (cd "$src" && apt-get source --download-only "criu=${CRIU_VERSION}-1" >/dev/null 2>&1 || true)
    rm -f "$tmp_list"; trap - RETURN
    apt-get update -qq
    ls "$src"/criu_${CRIU_VERSION}.orig.tar.* >/dev/null 2>&1 || die "could not fetch criu ${CRIU_VERSION} source"
  fi
  log "criu: building ${CRIU_VERSION} (about a minute)"
  if [ ! -x "$src/build/criu/criu" ] || [ "$(cat "$src/build/.cedana-patches" 2>/dev/null)" != "$(criu_patches_stamp)" ]; then
    rm -rf "$src/build" && mkdir -p "$src/build"
    tar -xf "$src"/criu_${CRIU_VERSION}.orig.tar.* -C "$src/build" --strip-components=1
    local patch
    for patch in "$ROOT"/scripts/criu-patches/*.patch; do
      patch -s -d "$src/build" -p1 <"$patch" || die "criu: $patch does not apply"
    done
    make -s -C "$src/build" -j"$(nproc)" criu >"$src/build.log" 2>&1 \
      || { tail -30 "$src/build.log"; die "criu build failed (log: $src/build.log)"; }
    criu_patches_stamp >"$src/build/.cedana-patches"
  fi
  # Only the binary and the RPC schema: we speak CRIU's RPC ourselves (no libcriu, no pycriu).
  make -s -C "$src/build" PREFIX="$CRIU_PREFIX" install-criu >>"$src/build.log" 2>&1 \
    || { tail -30 "$src/build.log"; die "criu install failed (log: $src/build.log)"; }
  mkdir -p "$CRIU_PREFIX/include/criu" "$CRIU_PREFIX/share"
  cp "$src/build/images/rpc.proto" "$CRIU_PREFIX/include/criu/rpc.proto"
  cp "$src/build/.cedana-patches" "$CRIU_PREFIX/share/cedana-patches"
}

# Our CRIU build carries small fixes (scripts/criu-patches, each explains itself); a CRIU built
# before a patch was added is rebuilt.
criu_patches_stamp() { cat "$ROOT"/scripts/criu-patches/*.patch | sha256sum | cut -d' ' -f1; }

install_criu() {
  if criu_ok "$CRIU_PREFIX/sbin/criu" && [ "$(cat "$CRIU_PREFIX/share/cedana-patches" 2>/dev/null)" = "$(criu_patches_stamp)" ]; then
    log "criu: $("$CRIU_PREFIX/sbin/criu" --version | head -n1) under $CRIU_PREFIX"
  elif criu_ok "$(command -v criu || true)" && [ -f /usr/include/criu/rpc.proto ]; then
    log "criu: using the distribution's $(criu --version | head -n1)"
    return
  else
    build_criu
    criu_ok "$CRIU_PREFIX/sbin/criu" || { "$CRIU_PREFIX/sbin/criu" check || true; die "criu ${CRIU_VERSION} was built but 'criu check' fails"; }
  fi
  ln -sf "$CRIU_PREFIX/sbin/criu" /usr/local/bin/criu
}

# task_cedana.so needs SLURM's internal headers and the config.h of a configured tree, which
# Debian does not package: fetch the installed slurm-wlm's own source (with Debian's patches,
# so structures match the installed binaries) through a temporary deb-src entry and run a
# plain ./configure (about 2.5 minutes; nothing is compiled). Kept per version.
prepare_slurm_source() {
  local deb_ver upstream dir tmp_list=/etc/apt/sources.list.d/cedana-slurm-src.sources
  deb_ver=$(dpkg-query -W -f='${Version}' slurm-wlm 2>/dev/null) || die "slurm-wlm is not installed"
  upstream=${deb_ver%%-*}
  dir=$SLURM_SRC_ROOT/$upstream
  if [ -f "$dir/config.h" ]; then log "slurm source: $upstream configured in $dir"; return; fi
  log "slurm source: fetching slurm-wlm $deb_ver from Debian (temporary deb-src entry)"
  local work=$SLURM_SRC_ROOT/.fetch
  rm -rf "$work" && mkdir -p "$work"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: *deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$tmp_list"
  else
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"${tmp_list%.sources}.list"
  fi
  trap 'rm -f "$tmp_list" "${tmp_list%.sources}.list"; apt-get update -qq || true' RETURN
  apt-get update -qq
  (cd "$work" && apt-get source -qq "slurm-wlm=$deb_ver" >"$work/fetch.log" 2>&1) \
    || { tail -20 "$work/fetch.log"; die "could not fetch the slurm-wlm $deb_ver source"; }
  rm -f "$tmp_list" "${tmp_list%.sources}.list"; trap - RETURN
  apt-get update -qq
  local tree; tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'slurm*' | head -n1)
  [ -n "$tree" ] || die "the slurm-wlm source did not unpack in $work"
  log "slurm source: configuring $upstream (about 2.5 minutes, config.h only)"
  (cd "$tree" && ./configure >"$work/configure.log" 2>&1) \
    || { tail -20 "$work/configure.log"; die "configure of the SLURM source failed (log: $work/configure.log)"; }
  rm -rf "$dir" && mv "$tree" "$dir" && rm -rf "$work"
}

build_project() {
  log "build: configuring and building in $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCEDANA_SLURM_SOURCE_ROOT="$SLURM_SRC_ROOT" >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)"
  log "install: cedana binaries to /usr/local/bin"
  cmake --install "$BUILD_DIR" --prefix /usr/local >/dev/null
  log "install: node bundle for the controller's web installer"
  "$ROOT/scripts/make_bundle.sh" /usr/local /usr/local/share/cedana/bundles >/dev/null
}

# The web UI's charting library and its browser test come from npm (the test drives Debian's
# Chromium with playwright-core, run by Node.js): Debian's nodejs and npm unless the machine has
# a node and an npm of its own.
install_ui_test_deps() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    log "debian packages: installing nodejs npm (the web UI test)"
    apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null \
      || die "could not install nodejs and npm from the Debian archive"
  fi
  [ -d "$ROOT/tests/ui/node_modules/playwright-core" ] && return
  log "npm: playwright-core for the web UI test"
  (cd "$ROOT/tests/ui" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
}

install_packages
install_criu
prepare_slurm_source
install_ui_test_deps
log "npm: the web UI's charting library (web/vendor/)"
"$ROOT/scripts/vendor_web.sh"
[ "${1:-}" = --deps ] && exit 0
build_project
log "done: $(command -v cedana) ($(cedana version 2>/dev/null | head -n1))"
