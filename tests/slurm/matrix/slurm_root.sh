#!/bin/bash
# A root file system of another Debian release, with that release's SLURM, for the SLURM version
# matrix (tests/slurm/matrix/matrix_test.sh). Source this file, then:
#
#   slurm_root_make SUITE      make (or reuse) the root for SUITE (trixie, sid): SLURM's daemons
#                              and headers, the tools and libraries cedana builds with, and
#                              SLURM's own source of exactly that version, configured (the task
#                              plugin needs its internal headers and config.h). Prints nothing;
#                              SLURM_ROOT is then its path, SLURM_ROOT_VERSION its SLURM version.
#   slurm_root_run SUITE CMD   run CMD as root inside it: a private mount namespace whose root is
#                              the root file system (pivot_root, so that CRIU sees one consistent
#                              mount tree), with /proc, /sys and /dev of the host, its own /run
#                              and /tmp, this checkout at /src (read-only), the build tree of
#                              that suite at /build and the host's CRIU build at /opt/cedana/criu.
#                              It shares the host's network and processes.
#
# Roots are kept under CEDANA_SLURM_ROOTS (/var/cache/cedana/slurm-roots) so that later runs
# reuse them; a root is made again when its package list changes. Making one takes about a
# minute from Debian's archive, configuring SLURM's source about three more.

SLURM_ROOTS=${CEDANA_SLURM_ROOTS:-/var/cache/cedana/slurm-roots}
SLURM_ROOT_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

# SLURM itself, what cedana builds with (scripts/setup.sh's list, less what only the host's
# other suites use), and Debian's criu for the libraries the host's CRIU build runs with (whose
# package names differ between releases); the host's build is the one used (matrix_test.sh).
SLURM_ROOT_PACKAGES=(
  slurmctld slurmd slurm-client munge libslurm-dev libmunge-dev
  g++ cmake ninja-build pkg-config dpkg-dev binutils
  libprotobuf-dev protobuf-compiler nlohmann-json3-dev libcli11-dev libfmt-dev
  zlib1g-dev libzstd-dev liblz4-dev libdeflate-dev libssl-dev libcurl4-openssl-dev librust-blake3-dev
  libgtest-dev libgmock-dev libcpp-httplib-dev libsqlite3-dev libpq-dev
  criu procps psmisc util-linux mount python3 ca-certificates
)

_root_log() { printf 'slurm root: %s\n' "$*" >&2; }

_root_archive() {
  local uri
  uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
  [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  printf '%s' "$uri"
}

_root_stamp() { printf '%s\n' "${SLURM_ROOT_PACKAGES[@]}" | sha256sum | cut -c1-16; }

slurm_root_make() {
  local suite=$1 dir uri
  dir=$SLURM_ROOTS/$suite
  SLURM_ROOT=$dir
  if [ "$(cat "$dir/.cedana-root" 2>/dev/null)" != "$(_root_stamp)" ]; then
    command -v mmdebstrap >/dev/null || apt-get install -y -qq mmdebstrap >/dev/null ||
      { _root_log "cannot install mmdebstrap"; return 1; }
    uri=$(_root_archive)
    [ -n "$uri" ] || { _root_log "no Debian archive address in /etc/apt"; return 1; }
    _root_log "making the $suite root in $dir (about a minute)"
    rm -rf "$dir" "$dir.new" && mkdir -p "$SLURM_ROOTS"
    local include; include=$(IFS=,; echo "${SLURM_ROOT_PACKAGES[*]}")
    # The archive these machines reach may be a snapshot whose unstable Release file has
    # expired: its age is not a reason to fail here.
    mmdebstrap --variant=apt --include="$include" --aptopt='Acquire::Check-Valid-Until "false"' \
      --customize-hook='echo "deb-src '"$uri"' '"$suite"' main" >>"$1/etc/apt/sources.list"' \
      "$suite" "$dir.new" "$uri" >"$SLURM_ROOTS/$suite.log" 2>&1 ||
      { tail -5 "$SLURM_ROOTS/$suite.log" >&2; _root_log "mmdebstrap $suite failed (log: $SLURM_ROOTS/$suite.log)"; return 1; }
    _root_stamp >"$dir.new/.cedana-root"
    mv "$dir.new" "$dir"
  fi
  SLURM_ROOT_VERSION=$(chroot "$dir" dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins 2>/dev/null)
  SLURM_ROOT_VERSION=${SLURM_ROOT_VERSION%%-*}
  [ -n "$SLURM_ROOT_VERSION" ] || { _root_log "no SLURM in the $suite root"; return 1; }
  _slurm_root_source "$suite"
}

# SLURM's source of the root's version, unpacked and configured at /opt/slurm-src/<version>.
_slurm_root_source() {
  local suite=$1 tree=$SLURM_ROOT/opt/slurm-src/$SLURM_ROOT_VERSION
  [ -f "$tree/config.h" ] && return 0
  _root_log "fetching and configuring SLURM $SLURM_ROOT_VERSION's source in the $suite root (about three minutes)"
  slurm_root_run "$suite" bash -c "
    set -e
    apt-get update -qq
    rm -rf /opt/slurm-src/.fetch && mkdir -p /opt/slurm-src/.fetch && cd /opt/slurm-src/.fetch
    # The archive may lack the .dsc of the exact Debian revision while it has the upstream
    # tarball: then the upstream source (Debian's patches do not change the structures the
    # task plugin reads).
    apt-get source -qq slurm-wlm >fetch.log 2>&1 ||
      { ls slurm-wlm_*.orig.tar.* >/dev/null 2>&1 && tar -xf slurm-wlm_*.orig.tar.*; } ||
      { cat fetch.log >&2; exit 1; }
    src=\$(find . -mindepth 1 -maxdepth 1 -type d -name 'slurm*' | head -n1)
    cd \"\$src\" && ./configure >../configure.log 2>&1
    cd .. && mv \"\$src\" /opt/slurm-src/$SLURM_ROOT_VERSION && cd / && rm -rf /opt/slurm-src/.fetch
  " || { _root_log "SLURM's source did not fetch or configure in the $suite root"; return 1; }
}

slurm_root_run() {
  local suite=$1; shift
  local root=$SLURM_ROOTS/$suite build=$SLURM_ROOTS/$suite-build
  mkdir -p "$build" "$root/src" "$root/build" "$root/opt/cedana/criu" "$root/.old"
  unshare --mount --propagation private -- bash -c '
    set -e
    r=$1 repo=$2 build=$3; shift 3
    mount --bind "$r" "$r"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs tmpfs "$r/run"
    mount -t tmpfs tmpfs "$r/tmp"
    mount --bind "$repo" "$r/src" && mount -o remount,bind,ro "$r/src"
    mount --bind "$build" "$r/build"
    [ -d /opt/cedana/criu ] && mount --bind /opt/cedana/criu "$r/opt/cedana/criu"
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
    cd "$r" && pivot_root . .old && umount -l /.old
    cd /
    exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      TERM=dumb LANG=C.UTF-8 "$@"
  ' slurm-root "$root" "$SLURM_ROOT_REPO" "$build" "$@"
}
