#!/bin/bash
# A throwaway S3 server for the S3 tests: radosgw (Ceph's S3 gateway) on 127.0.0.1 in front of
# a one-host Ceph cluster (1 monitor, 1 memstore OSD, no mgr, no auth between the daemons).
# radosgw checks SigV4 signatures and payload hashes (unlike s3rver), so passing against it
# shows that the client signs correctly.
#
# Source this file, then:
#   rgw_start DIR PORT       fresh cluster + gateway; exports RGW_DIR, RGW_PORT, RGW_ENDPOINT
#   rgw_stop_gateway [SIG]   stop only radosgw (data stays in the OSD); SIG=KILL to crash it
#   rgw_start_gateway        start radosgw again and wait until it answers
#   rgw_stop [DIR]           stop radosgw, OSD and monitor; safe to call twice or after a
#                            half-failed start
#   s3_request METHOD PATH [curl args...]   signed path-style request to $RGW_ENDPOINT$PATH
#   s3_make_bucket NAME, s3_put_file BUCKET/KEY FILE, s3_get BUCKET/KEY, s3_delete BUCKET/KEY,
#   s3_list BUCKET [PREFIX]
#
# Everything an instance writes (config, data, logs, admin sockets, pid files) is under DIR,
# and its ports are PORT (S3) and PORT+1000 (monitor), so two instances with different PORTs
# can run side by side. The functions act on the instance named by RGW_DIR/RGW_ENDPOINT; to
# drive a second instance from the same shell, set those two variables. Processes are only
# ever stopped through the pid files in DIR.
#
# Needs the Debian packages radosgw ceph-mon ceph-osd ceph-common (Ceph 16) and curl >= 7.75
# (--aws-sigv4). The daemons run as the calling user. RGW_MEMSTORE_BYTES (default 8 GiB) caps
# what the OSD stores; it holds it in RAM, about twice over. rgw_start takes about 4 s on an
# idle machine, rgw_stop about 1 s.

RGW_ACCESS_KEY=${RGW_ACCESS_KEY:-CEDANAKEY}
RGW_SECRET_KEY=${RGW_SECRET_KEY:-CEDANASECRET}
RGW_REGION=${RGW_REGION:-us-east-1}
export RGW_ACCESS_KEY RGW_SECRET_KEY RGW_REGION

# The OSD takes its listening ports from Ceph's default range (ms_bind_port_min/max). A
# gateway or monitor port inside it could be taken by the OSD first, so such ports are refused.
_RGW_OSD_PORT_MIN=6800
_RGW_OSD_PORT_MAX=7300
# The radosgw client section; its pid file and admin socket are named after it.
_RGW_NAME=client.rgw.cedana
# sha256 of the empty string: the payload hash of a request without a body.
_RGW_EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

_rgw_log() { printf 'rgw: %s\n' "$*" >&2; }

# The ceph CLI against this instance; it must not wait minutes for a dead monitor.
_rgw_ceph() { ceph -c "$RGW_DIR/ceph.conf" --connect-timeout 10 "$@"; }

# Prints the pid recorded in pid file $1 if that process is alive and is the program $2 (a
# pid file left behind by a killed daemon may name a pid that was reused since).
_rgw_live_pid() {
  local pid comm
  [ -f "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && _rgw_running "$pid" || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [ "$comm" = "$2" ] || return 1
  printf '%s\n' "$pid"
}

# True while process $1 exists and is not a zombie. The daemons fork away from us, so their
# exit status goes to whoever adopted them; an init that does not reap (some containers)
# would otherwise keep them "running" for ever.
_rgw_running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# _rgw_kill PIDFILE PROGRAM [SIGNAL]: signals the process (default TERM), waits until it is
# gone, SIGKILLs it after 10 s, removes the pid file. Nothing to do if it is not running.
_rgw_kill() {
  local pidfile=$1 prog=$2 sig=${3:-TERM} pid i
  if pid=$(_rgw_live_pid "$pidfile" "$prog"); then
    kill -s "$sig" "$pid" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
      _rgw_running "$pid" || break
      sleep 0.1
    done
    if _rgw_running "$pid"; then
      _rgw_log "$prog ($pid) still running 10 s after SIG$sig: SIGKILL"
      kill -s KILL "$pid" 2>/dev/null
      for ((i = 0; i < 50; i++)); do _rgw_running "$pid" || break; sleep 0.1; done
    fi
  fi
  rm -f "$pidfile"
}

# _rgw_dump_logs NAME...: prints the last lines of the instance's logs NAME (files in
# DIR/log; all of them if none is named) to stderr, for failed starts.
_rgw_dump_logs() {
  local f names=("$@")
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(ls "$RGW_DIR/log" 2>/dev/null)
  for f in "${names[@]}"; do
    f=$RGW_DIR/log/$f
    [ -s "$f" ] || continue
    printf -- '--- %s (tail) ---\n' "$f" >&2
    grep -v '^[[:space:]]*$' "$f" | tail -n 15 >&2
  done
}

# True if something accepts TCP connections on 127.0.0.1:$1.
_rgw_port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# True once the gateway answers HTTP at all (an anonymous GET / gets a bucket list).
_rgw_answers() { curl -s -o /dev/null --max-time 2 "$RGW_ENDPOINT/"; }

_rgw_write_conf() { # DIR PORT MONPORT FSID
  local d=$1 port=$2 monport=$3 fsid=$4
  cat >"$d/ceph.conf" <<EOF
# Written by tests/s3/rgw.sh: a throwaway one-host Ceph cluster behind radosgw.
[global]
fsid = $fsid
# Monitor on its own port, messenger v1 only, all daemons on loopback.
mon host = v1:127.0.0.1:$monport
ms bind msgr2 = false
public addr = 127.0.0.1
cluster addr = 127.0.0.1
# No cephx: nothing here needs keys, and keyrings would be more files to manage.
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
# One OSD: pools of size 1, no complaints about missing redundancy, no mgr to autoscale.
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
# Every pool radosgw creates on its first start is an OSD map change; the monitor batches
# changes for 1 s by default, which made the first start take ~9 s longer.
paxos propose interval = 0.1
# The monitor shuts itself down when its disk has less than 5% free (and warns below 30%): a
# test machine's disk filling up with checkpoints must not take the S3 server away.
mon data avail crit = 0
mon data avail warn = 0
# Every file of the instance under DIR: nothing in /var/run/ceph, /var/log/ceph,
# /var/lib/ceph or /tmp is shared with another instance or left behind.
run dir = $d
log file = $d/log/\$name.log
mon cluster log file = $d/log/cluster.log
admin socket = $d/\$name.asok
pid file = $d/\$name.pid
crash dir = $d/crash
keyring = $d/keyring

[client]
# CLI runs (ceph, radosgw-admin) may overlap: a shared admin socket path would collide.
admin socket =

[mon.a]
mon data = $d/mon.a

[osd.0]
osd data = $d/osd.0
# memstore keeps objects in RAM, only what is written (measured: about 2 bytes of RAM per
# byte stored). Default room: several 1 GiB checkpoints plus their multipart parts.
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-8589934592}
# We put the OSD into the CRUSH map ourselves before it starts: one command less at its
# start that could meet the monitor's "wrong fsid" race (see _rgw_start_cluster).
osd crush update on start = false
osd class update on start = false

[$_RGW_NAME]
admin socket = $d/\$name.asok
rgw frontends = beast endpoint=127.0.0.1:$port
rgw data = $d/rgw
rgw dns name = localhost
rgw luarocks location = $d/luarocks
# Reclaim the data of deleted and overwritten objects within seconds instead of hours, so
# tests that delete checkpoints do not keep them in RAM. Every 60 s was not enough: the memory
# suite stores a GiB of incompressible state every 12 s or so, and the memstore OSD (8 GiB) was
# full at its eighth case ("1 full osd(s)"; every request then hangs).
rgw gc obj min wait = 10
rgw gc processor period = 10
EOF
}

# rgw_start DIR PORT: creates a fresh cluster in the empty directory DIR with radosgw on
# 127.0.0.1:PORT and the S3 user RGW_ACCESS_KEY/RGW_SECRET_KEY, and waits until the gateway
# answers. Exports RGW_DIR and RGW_ENDPOINT (also on failure, so rgw_stop can clean up).
# On failure: prints the log tails, stops what it started, returns non-zero.
rgw_start() {
  if [ $# -ne 2 ]; then _rgw_log "usage: rgw_start DIR PORT"; return 2; fi
  local dir=$1 port=$2 monport fsid p t0=$SECONDS
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt 1024 ] || [ "$port" -gt 64535 ]; then
    _rgw_log "PORT must be a number in 1024..64535, not '$port'"; return 2
  fi
  monport=$((port + 1000))
  for p in "$port" "$monport"; do
    if [ "$p" -ge $_RGW_OSD_PORT_MIN ] && [ "$p" -le $_RGW_OSD_PORT_MAX ]; then
      _rgw_log "port $p (PORT $port, monitor PORT+1000) is in the OSD's range $_RGW_OSD_PORT_MIN-$_RGW_OSD_PORT_MAX: choose another PORT"
      return 2
    fi
    if _rgw_port_busy "$p"; then _rgw_log "port $p is already in use"; return 1; fi
  done
  local missing=()
  for p in ceph-mon ceph-osd ceph monmaptool radosgw radosgw-admin curl; do
    command -v "$p" >/dev/null || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    _rgw_log "missing: ${missing[*]} (apt-get install --no-install-recommends radosgw ceph-mon ceph-osd ceph-common curl)"
    return 1
  fi
  if [ ! -d "$dir" ] || [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    _rgw_log "DIR must be an existing empty directory: $dir"; return 2
  fi
  dir=$(cd "$dir" && pwd)
  export RGW_DIR=$dir RGW_PORT=$port RGW_ENDPOINT=http://127.0.0.1:$port
  mkdir -p "$dir/mon.a" "$dir/osd.0" "$dir/log" "$dir/rgw" "$dir/crash"
  fsid=$(cat /proc/sys/kernel/random/uuid)
  _rgw_write_conf "$dir" "$port" "$monport" "$fsid"

  if ! _rgw_start_cluster "$fsid" "$monport"; then
    _rgw_dump_logs setup.out mon.a.log osd-start.out osd.0.log cluster.log; rgw_stop "$dir"; return 1
  fi
  if ! rgw_start_gateway; then rgw_stop "$dir"; return 1; fi
  if ! radosgw-admin -c "$dir/ceph.conf" user create --uid=cedana --display-name=cedana \
      --access-key="$RGW_ACCESS_KEY" --secret-key="$RGW_SECRET_KEY" \
      >"$dir/log/user-create.out" 2>&1; then
    _rgw_log "radosgw-admin user create failed:"; cat "$dir/log/user-create.out" >&2
    _rgw_dump_logs "$_RGW_NAME.log" client.admin.log; rgw_stop "$dir"; return 1
  fi
  _rgw_log "up at $RGW_ENDPOINT (monitor port $monport, dir $dir) in $((SECONDS - t0)) s"
}

# Monitor and OSD (the part that holds the data).
_rgw_start_cluster() { # FSID MONPORT
  local fsid=$1 monport=$2 dir=$RGW_DIR conf=$RGW_DIR/ceph.conf osd_uuid id='' i deadline
  monmaptool --create --addv a "[v1:127.0.0.1:$monport]" --fsid "$fsid" "$dir/monmap" \
    >"$dir/log/setup.out" 2>&1 || { _rgw_log "monmaptool failed"; return 1; }
  ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" >>"$dir/log/setup.out" 2>&1 ||
    { _rgw_log "ceph-mon --mkfs failed"; return 1; }
  # The daemons fork; the starting process exits with the daemon's init status.
  ceph-mon -c "$conf" -i a >>"$dir/log/setup.out" 2>&1 || { _rgw_log "ceph-mon failed to start"; return 1; }

  # A client that reaches the monitor in its first moments may send its commands before it
  # has the monitor map, with a zero fsid, and gets "wrong fsid" (EPERM; the OSD start in the
  # recipe this file grew from failed the same way). So: wait until a harmless command works,
  # and retry the idempotent ones below.
  deadline=$((SECONDS + 15))
  until _rgw_ceph mon stat >>"$dir/log/setup.out" 2>&1; do
    [ $SECONDS -lt $deadline ] || { _rgw_log "the monitor does not answer commands after 15 s"; return 1; }
    sleep 0.1
  done
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  for i in 1 2 3; do  # "osd create UUID" gives the same id for the same UUID
    id=$(_rgw_ceph osd create "$osd_uuid" 2>>"$dir/log/setup.out") && break
    sleep 0.5
  done
  [ "$id" = 0 ] || { _rgw_log "ceph osd create: expected id 0, got '$id'"; return 1; }
  ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/setup.out" 2>&1 ||
    { _rgw_log "ceph-osd --mkfs failed"; return 1; }
  for i in 1 2 3; do  # setting the same location again is a no-op
    _rgw_ceph osd crush add osd.0 1.0 host=localhost root=default >>"$dir/log/setup.out" 2>&1 && break
    [ "$i" = 3 ] && { _rgw_log "ceph osd crush add failed"; return 1; }
    sleep 0.5
  done
  # The OSD start failed now and then in the recipe ("wrong fsid", see above): retried.
  for i in 1 2 3 4 5; do
    ceph-osd -c "$conf" -i 0 >>"$dir/log/osd-start.out" 2>&1 && break
    _rgw_log "ceph-osd start attempt $i failed: $(tail -n 1 "$dir/log/osd-start.out")"
    [ "$i" = 5 ] && return 1
    sleep 1
  done
  # radosgw would hang creating its pools while the OSD is down; wait here so a dead OSD is
  # reported as such.
  deadline=$((SECONDS + 30))
  until _rgw_ceph osd dump 2>/dev/null | grep -q '^osd\.0 up  *in '; do
    _rgw_live_pid "$dir/osd.0.pid" ceph-osd >/dev/null || { _rgw_log "ceph-osd exited"; return 1; }
    if [ $SECONDS -ge $deadline ]; then
      _rgw_log "osd.0 not up and in after 30 s: $(_rgw_ceph osd dump 2>&1 | grep '^osd\.0')"
      return 1
    fi
    sleep 0.1
  done
}

# rgw_start_gateway: starts radosgw of the instance in RGW_DIR/RGW_ENDPOINT and waits (up to
# 60 s; its first start creates its pools) until it answers HTTP. On failure prints its log
# tail and returns 1.
rgw_start_gateway() {
  local pid pidfile=$RGW_DIR/$_RGW_NAME.pid port=${RGW_ENDPOINT##*:} t0=$SECONDS
  local logs=("$_RGW_NAME.log" radosgw-start.out)
  if pid=$(_rgw_live_pid "$pidfile" radosgw); then
    _rgw_log "radosgw already running ($pid)"; return 1
  fi
  # radosgw would start, fail to bind, and exit; say what is wrong instead.
  if _rgw_port_busy "$port"; then _rgw_log "port $port is already in use"; return 1; fi
  rm -f "$pidfile"
  # It forks at once; the pid file appears a moment later.
  if ! radosgw -c "$RGW_DIR/ceph.conf" -n "$_RGW_NAME" >>"$RGW_DIR/log/radosgw-start.out" 2>&1; then
    _rgw_log "radosgw failed to start:"; _rgw_dump_logs "${logs[@]}"; return 1
  fi
  until _rgw_answers; do
    if [ $((SECONDS - t0)) -ge 2 ] && ! _rgw_live_pid "$pidfile" radosgw >/dev/null; then
      _rgw_log "radosgw exited before answering:"; _rgw_dump_logs "${logs[@]}"; return 1
    fi
    if [ $((SECONDS - t0)) -ge 60 ]; then
      _rgw_log "radosgw does not answer at $RGW_ENDPOINT after 60 s:"
      _rgw_dump_logs "${logs[@]}" cluster.log; return 1
    fi
    sleep 0.1
  done
}

# rgw_stop_gateway [SIGNAL]: stops radosgw (default SIGTERM; KILL simulates a crash) and waits
# until the process is gone. The monitor and OSD keep running with the data.
rgw_stop_gateway() {
  _rgw_kill "$RGW_DIR/$_RGW_NAME.pid" radosgw "${1:-TERM}"
}

# rgw_stop [DIR]: stops radosgw, the OSD and the monitor of the instance in DIR (default
# RGW_DIR), each by its pid file, waiting for each to exit. Leaves DIR's files in place.
rgw_stop() {
  local dir=${1:-${RGW_DIR:-}}
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  _rgw_kill "$dir/$_RGW_NAME.pid" radosgw
  _rgw_kill "$dir/osd.0.pid" ceph-osd
  _rgw_kill "$dir/mon.a.pid" ceph-mon
}

# RFC 3986 encoding of $1 (every byte but A-Z a-z 0-9 - _ . ~); "/" too unless $2 is "keep/".
_s3_encode() {
  local LC_ALL=C s=$1 keep=${2:-} out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case "$c" in
      [A-Za-z0-9._~-]) out+=$c ;;
      /) if [ "$keep" = keep/ ]; then out+=/; else out+=%2F; fi ;;
      *) printf -v c '%%%02X' "'$c"; out+=$c ;;
    esac
  done
  printf '%s' "$out"
}

# s3_request METHOD PATH [curl args...]: a SigV4-signed, path-style request to
# $RGW_ENDPOINT$PATH with RGW_ACCESS_KEY/RGW_SECRET_KEY. PATH must already be encoded, with a
# canonical query if any (keys sorted, values RFC 3986-encoded: curl 7.88 signs it as given).
# The body comes from the curl args: -T/--upload-file FILE (streamed) or --data-binary
# @FILE|STRING; its sha256 is sent as x-amz-content-sha256 (radosgw checks it) unless the args
# set that header themselves. Prints the response body to stdout (or where -o says; for HEAD
# the response headers); -D FILE keeps the response headers (e.g. a part's ETag). Returns
# curl's status if the request failed, 22 on HTTP >= 300 (with the status on stderr).
s3_request() {
  if [ $# -lt 2 ]; then _rgw_log "usage: s3_request METHOD PATH [curl args...]"; return 2; fi
  local method=$1 path=$2; shift 2
  local sha=$_RGW_EMPTY_SHA256 args=("$@") i a next own_hash='' hdr='' keep_hdr='' rc code
  for ((i = 0; i < ${#args[@]}; i++)); do
    a=${args[i]} next=${args[i + 1]:-}
    case "$a" in
      -T|--upload-file) sha=$(sha256sum <"$next" | cut -d' ' -f1) || return 1 ;;
      --data-binary)
        if [ "${next:0:1}" = @ ]; then sha=$(sha256sum <"${next:1}" | cut -d' ' -f1) || return 1
        else sha=$(printf '%s' "$next" | sha256sum | cut -d' ' -f1); fi ;;
      -d|--data|--data-raw|--data-ascii|--data-urlencode|-F|--form)
        _rgw_log "s3_request: use -T FILE or --data-binary, not $a (its body is not hashed here)"
        return 2 ;;
      -H|--header) [[ "${next,,}" == x-amz-content-sha256:* ]] && own_hash=1 ;;
      -D|--dump-header)  # the status is read from the dumped headers, so they need a file
        if [ "$next" = - ]; then _rgw_log "s3_request: use -D FILE, not -D -"; return 2; fi
        hdr=$next keep_hdr=1 ;;
    esac
  done
  [ -n "$own_hash" ] || args+=(-H "x-amz-content-sha256: $sha")
  local verb=(-X "$method")
  [ "$method" = HEAD ] && verb=(--head)  # -X HEAD would wait for a body that never comes
  if [ -z "$hdr" ]; then hdr=$(mktemp "${TMPDIR:-/tmp}/s3-headers.XXXXXX") || return 1; fi
  rc=0
  curl -sS -g --connect-timeout 5 -D "$hdr" "${verb[@]}" \
    --aws-sigv4 "aws:amz:$RGW_REGION:s3" --user "$RGW_ACCESS_KEY:$RGW_SECRET_KEY" \
    "${args[@]}" "$RGW_ENDPOINT$path" || rc=$?
  # The last status line counts (a "100 Continue" may come first).
  code=$(grep -a '^HTTP/' "$hdr" | tail -n 1 | cut -d' ' -f2) || true
  [ -n "$keep_hdr" ] || rm -f "$hdr"
  if [ "$rc" -ne 0 ]; then _rgw_log "s3_request $method $path: curl failed ($rc)"; return "$rc"; fi
  if ! [[ "$code" =~ ^[0-9]+$ ]] || [ "$code" -ge 300 ]; then
    _rgw_log "s3_request $method $path: HTTP ${code:-?}"; return 22
  fi
  return 0
}

# Runs s3_request with its body captured; on failure shows the body (S3's error document)
# on stderr, so helpers that expect no output still say why they failed.
_s3_quiet() {
  local out rc=0
  out=$(s3_request "$@") || rc=$?
  [ "$rc" -eq 0 ] || [ -z "$out" ] || printf '%s\n' "$out" >&2
  return "$rc"
}

# s3_make_bucket NAME (S3 names: 3-63 characters, lower case, digits, "-", ".")
s3_make_bucket() { _s3_quiet PUT "/$(_s3_encode "$1")"; }

# s3_put_file BUCKET/KEY FILE [curl args...]: uploads FILE in one PUT (streamed, hashed
# first).
s3_put_file() {
  [ -f "$2" ] || { _rgw_log "s3_put_file: no file $2"; return 2; }
  # curl -T appends the file name to a URL ending in "/".
  [ "${1: -1}" != / ] || { _rgw_log "s3_put_file: key ends in /: $1"; return 2; }
  local key=$1 file=$2; shift 2
  _s3_quiet PUT "/$(_s3_encode "$key" keep/)" -T "$file" "$@"
}

# s3_get BUCKET/KEY [curl args...]: prints the object (or writes it where -o FILE says).
s3_get() { local k=$1; shift; s3_request GET "/$(_s3_encode "$k" keep/)" "$@"; }

# s3_delete BUCKET/KEY
s3_delete() { _s3_quiet DELETE "/$(_s3_encode "$1" keep/)"; }

# s3_list BUCKET [PREFIX]: prints the keys starting with PREFIX, one a line, in S3's order
# (ListObjectsV2, following continuation tokens).
s3_list() {
  local bucket=$1 prefix=${2:-} token='' query body keys
  while :; do
    # Canonical query: keys in byte order, values RFC 3986-encoded.
    query=
    [ -n "$token" ] && query="continuation-token=$(_s3_encode "$token")&"
    query+="list-type=2&prefix=$(_s3_encode "$prefix")"
    body=$(s3_request GET "/$(_s3_encode "$bucket")?$query") || return
    keys=$(grep -o '<Key>[^<]*</Key>' <<<"$body" | sed -e 's/^<Key>//' -e 's/<\/Key>$//' \
      -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&apos;/'/g" -e 's/&amp;/\&/g') || true
    if [ -n "$keys" ]; then printf '%s\n' "$keys"; fi
    grep -q '<IsTruncated>true</IsTruncated>' <<<"$body" || return 0
    token=$(grep -o '<NextContinuationToken>[^<]*</NextContinuationToken>' <<<"$body" |
      sed -e 's/<[^>]*>//g' -e 's/&amp;/\&/g') || true
    [ -n "$token" ] || { _rgw_log "s3_list: truncated listing without a continuation token"; return 1; }
  done
}
