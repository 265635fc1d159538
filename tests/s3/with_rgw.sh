#!/bin/bash
# with_rgw.sh PORT NAME SCRIPT: runs a test script against its own radosgw on 127.0.0.1:PORT.
# The script's checkpoint dir becomes s3://cedana-test/NAME (CEDANA_TEST_CHECKPOINT_DIR, read
# by tests/integration/lib.sh) and its daemon gets the test server's credentials and endpoint
# through the AWS variables. The server is stopped afterwards, whatever the script did.
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: with_rgw.sh PORT NAME SCRIPT" >&2; exit 2; }
port=$1 name=$2 script=$3
source "$(dirname "$0")/rgw.sh"

dir=$(mktemp -d /var/tmp/cedana-rgw.XXXXXX)
stop() { rgw_stop "$dir"; rm -rf "$dir"; }
trap stop EXIT
rgw_start "$dir" "$port" || exit 1
s3_make_bucket cedana-test || exit 1

export AWS_ACCESS_KEY_ID=$RGW_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET_KEY
export AWS_REGION=$RGW_REGION AWS_ENDPOINT_URL=$RGW_ENDPOINT
export CEDANA_TEST_CHECKPOINT_DIR=s3://cedana-test/$name
bash "$script"
