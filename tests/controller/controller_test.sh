#!/bin/bash
# The controller over real HTTP: `cedana-slurm daemon` with its catalog in SQLite (default) or
# in a throwaway PostgreSQL server (argument "postgres"), a node daemon that reports to it,
# a checkpoint made through that node daemon, then tests/controller/api_test.py (auth,
# scoping, policies, restore through the node daemon, deletion), `cedana-slurm daemon
# status`, and the web installer installing a node side into a fresh prefix.
#
# Variables: CEDANA, CEDANA_SLURM (binaries), CEDANA_BUILD_DIR (for the installer's bundle).
source "$(dirname "$0")/../integration/lib.sh"
DB=${1:-sqlite}
CEDANA_SLURM=${CEDANA_SLURM:-$ROOT/build/src/cedana_slurm/cedana-slurm}
CEDANA_BUILD_DIR=${CEDANA_BUILD_DIR:-$ROOT/build}
export COUNTER_SLEEP=0.2
case $DB in
  sqlite) PORT=18080 ;;
  postgres) PORT=18180 PG_PORT=15432 ;;
  *) echo "usage: controller_test.sh [sqlite|postgres]" >&2; exit 2 ;;
esac
ADMIN=admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
URL=http://127.0.0.1:$PORT

start_postgres() { # a server of our own on loopback, as the postgres user, trust auth
  local bin=/usr/lib/postgresql/15/bin
  PG_DIR=$(mktemp -d /var/tmp/cedana-pg.XXXXXX)
  chown postgres "$PG_DIR"
  CLEANUPS+=("runuser -u postgres -- $bin/pg_ctl -D $PG_DIR/data -m fast -w stop >/dev/null 2>&1; rm -rf $PG_DIR")
  runuser -u postgres -- "$bin/initdb" -D "$PG_DIR/data" -A trust -U cedana >"$PG_DIR/initdb.log" 2>&1 &&
    runuser -u postgres -- "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR" start >/dev/null &&
    psql -q -h 127.0.0.1 -p "$PG_PORT" -U cedana -d postgres -c "CREATE DATABASE catalog" ||
    { say "postgres did not start:"; cat "$PG_DIR"/*.log >&2; return 1; }
}

if [ "$DB" = postgres ]; then
  start_postgres || exit 1
  export CEDANA_DB_URL="postgresql://cedana@127.0.0.1:$PG_PORT/catalog"
else
  export CEDANA_DB_URL="sqlite://$T/catalog.db"
fi

# The node daemon reports to the controller (agent), with the admin token.
export CEDANA_URL=$URL/v1 CEDANA_AUTH_TOKEN=$ADMIN CEDANA_NODE_NAME=node-under-test
start_daemon || exit 1

export CEDANA_CONTROLLER_LISTEN=127.0.0.1:$PORT CEDANA_CONTROLLER_WEB_DIR=$ROOT/web
export CEDANA_CONTROLLER_BUNDLE_DIR=$T/bundles
"$CEDANA_SLURM" daemon >"$T/controller.log" 2>&1 &
CONTROLLER_PID=$!
CLEANUPS+=("kill $CONTROLLER_PID 2>/dev/null; wait $CONTROLLER_PID 2>/dev/null")
wait_for 20 curl -fs -o /dev/null "$URL/v1/health" || { say "controller did not start:"; cat "$T/controller.log" >&2; exit 1; }
check "controller migrated its $DB catalog" grep -q "migrated the $DB database to schema version" "$T/controller.log"
check "cedana-slurm daemon status" bash -c "'$CEDANA_SLURM' daemon status | grep -q running"

# Checkpoints of two users made through the node daemon: root's, and nobody's (a non-root
# workload in its own PID namespace, which stock CRIU cannot dump: scripts/criu-patches/0003).
w_root=$("$CEDANA" run --label api-root -- "$WORKLOADS/counter.sh" 2>/dev/null)
chmod 755 "$T" && mkdir -p "$T/nobody" && chown nobody "$T/nobody"
w_user=$(cd "$T/nobody" && runuser -u nobody -- "$CEDANA" run --label api-user \
  --output "$T/nobody/counter.out" -- "$WORKLOADS/counter.sh" 2>/dev/null)
sleep 1
ROOT_CKPT=$(dump_id "$w_root" --leave-running)
check "a checkpoint through the node daemon" test -n "$ROOT_CKPT"
USER_CKPT=$(cd "$T/nobody" && runuser -u nobody -- "$CEDANA" dump "$w_user" 2>"$T/user-dump.err")
check "another user's checkpoint through the node daemon" test -n "$USER_CKPT"
[ -n "$USER_CKPT" ] || cat "$T/user-dump.err" >&2
"$CEDANA" kill "$w_root" >/dev/null

# Storage poisoning (docs/security.md, "Controller index"): nobody owns her directory of the
# checkpoint dir, as on an export, and plants entries meant for root's listing: her genuine
# manifest rewritten to say root, a symlink to root's manifest, and a copy of her own genuine
# manifest at another id. None may be indexed; her genuine checkpoint is (api_test.py).
mine=$(find "$CEDANA_CHECKPOINT_DIR/nobody" -mindepth 3 -maxdepth 3 -path "*/$USER_CKPT/manifest.json")
roots=$(find "$CEDANA_CHECKPOINT_DIR/root" -mindepth 3 -maxdepth 3 -path "*/$ROOT_CKPT/manifest.json")
check "poisoning: the genuine manifests to start from exist" test -n "$mine" -a -n "$roots"
chown -R nobody "$CEDANA_CHECKPOINT_DIR/nobody"
planted=$CEDANA_CHECKPOINT_DIR/nobody/api-user
runuser -u nobody -- bash -c "set -e
  mkdir -p '$CEDANA_CHECKPOINT_DIR/nobody/api-root/forged-as-root' '$planted/linked-to-root' '$planted/copied-genuine'
  python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m.update(owner=\"root\", label=\"api-root\", id=\"forged-as-root\"); json.dump(m, open(sys.argv[2], \"w\"))' \
    '$mine' '$CEDANA_CHECKPOINT_DIR/nobody/api-root/forged-as-root/manifest.json'
  ln -s '$roots' '$planted/linked-to-root/manifest.json'
  cp '$mine' '$planted/copied-genuine/manifest.json'" || fail "poisoning: nobody could not plant her entries"
not_indexed() { grep -q "index: checkpoint nobody/$1 not indexed: .*$2" "$T/controller.log"; }
check "poisoning: the forged manifest is not indexed (its MAC fails)" \
  wait_for 15 not_indexed api-root/forged-as-root "MAC mismatch"
check "poisoning: the symlinked manifest is not indexed" wait_for 15 not_indexed api-user/linked-to-root "symlink"
check "poisoning: the copied genuine manifest is not indexed (not at its own path)" \
  wait_for 15 not_indexed api-user/copied-genuine "are not its path's"
check "poisoning: no planted entry is listed" bash -c "curl -fsS '$URL/v1/checkpoints' -H 'Authorization: Bearer $ADMIN' |
  python3 -c 'import json, sys; ids = [c[\"id\"] for c in json.load(sys.stdin)]
assert ids.count(\"$ROOT_CKPT\") == 1 and ids.count(\"$USER_CKPT\") == 1, ids
assert not set(ids) & {\"forged-as-root\", \"linked-to-root\", \"copied-genuine\"}, ids'"

CONTROLLER=$URL ADMIN_TOKEN=$ADMIN ROOT_CKPT=$ROOT_CKPT USER_CKPT=$USER_CKPT CKPT_DIR=$CEDANA_CHECKPOINT_DIR \
  python3 "$HERE/../controller/api_test.py" >"$T/api.out" 2>&1
api=$?
grep -E '^(PASS|FAIL)' "$T/api.out" | while read -r line; do say "$line"; done
check "api_test.py" test $api = 0
[ $api = 0 ] || tail -5 "$T/api.out" >&2
CONTROLLER=$URL ADMIN_TOKEN=$ADMIN python3 "$HERE/../controller/abuse_test.py" >"$T/abuse.out" 2>&1
abuse=$?
grep -E '^(PASS|FAIL)' "$T/abuse.out" | while read -r line; do say "$line"; done
check "abuse_test.py" test $abuse = 0
[ $abuse = 0 ] || tail -5 "$T/abuse.out" >&2
# /metrics, scraped as Prometheus does (no token): what the catalog holds after the API tests.
curl -sS -D "$T/metrics.headers" "$URL/metrics" -o "$T/metrics.txt"
check "metrics: served in Prometheus's text format" grep -qi '^content-type: text/plain; version=0.0.4' "$T/metrics.headers"
check "metrics: agree with the catalog, and name no user" python3 - "$T/metrics.txt" "$URL" "$ADMIN" <<'PY'
import json, re, sys, urllib.request
text = open(sys.argv[1]).read()
samples = {}
for line in text.splitlines():
    if line.startswith("#") or not line:
        continue
    m = re.fullmatch(r'([a-z_]+)(\{[^}]*\})? (\S+)', line)
    assert m, "not a sample line: " + line
    samples[m.group(1) + (m.group(2) or "")] = float(m.group(3))
def total(prefix):
    return sum(v for k, v in samples.items() if k.startswith(prefix))
req = urllib.request.Request(sys.argv[2] + "/v1/checkpoints", headers={"Authorization": "Bearer " + sys.argv[3]})
listed = json.load(urllib.request.urlopen(req, timeout=10))
assert total("cedana_checkpoints{") == len(listed), (total("cedana_checkpoints{"), len(listed))
assert total("cedana_checkpoint_stored_bytes{") == sum(c["size"] for c in listed), samples
assert total('cedana_checkpoint_duration_seconds_count{phase="freeze"') == len(listed), samples
assert total('cedana_operations_total{kind="restore",state="done"') >= 1, samples
assert samples['cedana_nodes{state="reporting"}'] >= 1, samples
assert "nobody" not in text, "a user name in /metrics"
for family in ("cedana_checkpoints", "cedana_operations_total", "cedana_checkpoint_duration_seconds", "cedana_managed_jobs", "cedana_nodes"):
    assert "# TYPE " + family + " " in text, family
PY
n=$(last_number "$T/nobody/counter.out" "Counter: ")
check "the user's workload restored through the controller counts on" \
  wait_for 10 at_least "$T/nobody/counter.out" "Counter: " $((n + 2))

# The web installer: a bundle from a staged install, served by the controller, installed into a
# fresh prefix with the seeds' CEDANA_* variables.
if cmake --install "$CEDANA_BUILD_DIR" --prefix "$T/stage" >/dev/null &&
   "$ROOT/scripts/make_bundle.sh" "$T/stage" "$T/bundles" >/dev/null; then
  version=$("$CEDANA" version | awk 'NR == 1 {print $2}')
  check "installer: no token is refused" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/install/slurm")" = 401
  out=$(curl -s "$URL/v1/install/slurm?version=9.9.9" -H "Authorization: Bearer $ADMIN")
  check "installer: an unknown version says which ones exist" grep -q "version 9.9.9 is not available.*available: $version" <<<"$out"
  curl -fsS "$URL/v1/install/slurm" -H "Authorization: Bearer $ADMIN" >"$T/install.sh"
  # A curl that records its argv (what ps shows every user) before running the real one.
  mkdir -p "$T/spy" && printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s"\nexec /usr/bin/curl "$@"\n' "$T/curl-argv" >"$T/spy/curl"
  chmod +x "$T/spy/curl"
  env -i PATH="$T/spy:$PATH" CEDANA_URL="$URL/v1" CEDANA_AUTH_TOKEN="$ADMIN" CEDANA_PREFIX="$T/prefix" \
    CEDANA_SLURM_SETUP=0 CEDANA_CONFIG="$T/installed.json" CEDANA_NODE_NAME=installed-node \
    CEDANA_CHECKPOINT_DIR=s3://my-checkpoints-bucket CEDANA_CHECKPOINT_STREAMS=4 CEDANA_CHECKPOINT_COMPRESSION=gzip \
    bash "$T/install.sh" >"$T/install.out" 2>&1
  check "installer: the script succeeds" test $? = 0
  check "installer: curl ran, and the token was never in its argv" \
    bash -c "grep -q install/bundle '$T/curl-argv' && ! grep -qF '$ADMIN' '$T/curl-argv'"
  check "installer: cedana runs from the prefix" bash -c "'$T/prefix/bin/cedana' version | grep -q '$version'"
  check "installer: cedana-slurm and the plugins are there" \
    test -x "$T/prefix/bin/cedana-slurm" -a -n "$(ls "$T"/prefix/share/cedana/plugins/slurm/*/spank_cedana.so 2>/dev/null)"
  check "installer: the config has the seeds' variables" python3 -c "
import json; c = json.load(open('$T/installed.json'))['checkpoint']
assert c == {**c, 'dir': 's3://my-checkpoints-bucket', 'streams': 4, 'compression': 'gzip'}, c"
  check "installer: the node registered with the controller" \
    bash -c "curl -fsS '$URL/v1/nodes' -H 'Authorization: Bearer $ADMIN' | grep -q installed-node"
  check "installer: the plugin store of the prefix is used" \
    bash -c "'$T/prefix/bin/cedana' plugin list 2>&1 | grep -q spank"
  [ -f "$T/install.out" ] && grep -q "error" "$T/install.out" && cat "$T/install.out" >&2
else
  fail "installer: could not stage a bundle from $CEDANA_BUILD_DIR"
fi

kill "$CONTROLLER_PID"; wait "$CONTROLLER_PID" 2>/dev/null
check "controller stops cleanly on SIGTERM" grep -q "controller: stopped" "$T/controller.log"
if [ "$FAILED" -gt 0 ]; then
  say "--- controller log ---"; tail -20 "$T/controller.log" >&2
  say "--- agent ---"; grep "agent" "$T/daemon.log" | tail -10 >&2
fi
finish
