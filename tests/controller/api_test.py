#!/usr/bin/env python3
"""REST API checks against a running controller (tests/controller/controller_test.sh starts it).

Env: CONTROLLER (http://127.0.0.1:PORT), ADMIN_TOKEN, ROOT_CKPT and USER_CKPT (checkpoints of
root and of nobody that the harness made through a node daemon), CKPT_DIR (the checkpoint dir).
Prints PASS/FAIL lines; exits 1 if anything failed.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ["CONTROLLER"]
ADMIN = os.environ["ADMIN_TOKEN"]
failed = 0


def call(method, path, token=None, body=None, raw=None):
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


def pages(path, token, limit):
    """Every page of a listing at `limit` items a page, following X-Next-After; None on an error."""
    out, after = [], None
    for _ in range(1000):
        sep = "&" if "?" in path else "?"
        req = urllib.request.Request(BASE + path + f"{sep}limit={limit}" + (f"&after={after}" if after else ""))
        req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                out.append(json.loads(r.read()))
                after = r.headers.get("X-Next-After")
        except urllib.error.HTTPError:
            return None
        if not after:
            return out
    return None


def check(what, ok, detail=""):
    global failed
    if ok:
        print(f"PASS: {what}")
    else:
        failed += 1
        print(f"FAIL: {what} {detail}")


def wait_for(pred, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.5)
    return None


def listing_with(ck, token):
    """The checkpoint list that token sees once it holds ck (indexed from storage), or None."""
    return wait_for(lambda: (lambda r: r[1] if r[0] == 200 and ck in {c["id"] for c in r[1]} else None)(
        call("GET", "/v1/checkpoints", token=token)), 20)


def restore_through_agent(ck, token):
    """Asks the controller to restore ck; returns its answer and the operation once it ended."""
    st, body = call("POST", f"/v1/checkpoints/{ck}/restore", token=token, body={})
    op_id = body.get("id") if isinstance(body, dict) else None
    done = wait_for(lambda: (lambda r: r[1] if r[1].get("state") in ("done", "failed") else None)(
        call("GET", f"/v1/operations/{op_id}", token=token)), 60)
    return st, body, done


# health and auth
st, body = call("GET", "/v1/health")
check("health answers without a token", st == 200 and body["status"] == "ok", body)
st, body = call("GET", "/v1/checkpoints")
check("no token: 401 unauthenticated", st == 401 and body["error"]["code"] == "unauthenticated", (st, body))
st, body = call("GET", "/v1/checkpoints", token="cdn_not-a-token")
check("wrong token: 401", st == 401, (st, body))
st, body = call("GET", "/v1/whoami", token=ADMIN)
check("admin token: whoami", st == 200 and body["admin"] is True, body)

# tokens: created by the admin, shown once, stored hashed
st, body = call("POST", "/v1/tokens", token=ADMIN, body={"user": "nobody"})
check("admin creates a user token", st == 201 and body["token"].startswith("cdn_"), body)
user_token, user_token_id = body["token"], body["id"]
st, body = call("POST", "/v1/tokens", token=ADMIN, body={"user": "../etc"})
check("token for an invalid user name is refused", st == 400, (st, body))
st, body = call("GET", "/v1/tokens", token=ADMIN)
check("token list has no secrets", st == 200 and all("token" not in t for t in body), body)
st, body = call("GET", "/v1/whoami", token=user_token)
check("user token: whoami", st == 200 and body == {"user": "nobody", "admin": False}, body)
st, body = call("GET", "/v1/tokens", token=user_token)
check("user token: admin-only call refused with 403", st == 403 and body["error"]["code"] == "permission_denied", (st, body))
st, body = call("GET", "/v1/nodes", token=user_token)
check("user token: nodes refused", st == 403, (st, body))

# nodes: the node daemon's agent registered (it reports every 2 s, retrying until the
# controller answers)
def node_up():
    st, body = call("GET", "/v1/nodes", token=ADMIN)
    return st == 200 and any(n["status"] == "up" for n in body)


check("the node daemon registered", wait_for(node_up, 20), call("GET", "/v1/nodes", token=ADMIN))

# A node's report of a SLURM job's run (what the job's timeline records) is stored in this
# catalog's SQL, first and again; the job is unknown to slurmctld here, so it has no timeline.
run = {"node": "api-test-node", "workloads": [{"job_id": 424242, "label": "l", "user": "nobody", "status": "running",
                                               "restart_count": 1, "started_at_ms": 1000, "restored_from": "ck-x"}]}
for attempt in ("first", "again"):
    st, body = call("POST", "/v1/agent/workloads", token=ADMIN, body=run)
    check(f"a node's report of a job's run is recorded ({attempt})", st == 200 and body == {"jobs": 1}, (st, body))
st, body = call("GET", "/v1/jobs/424242/timeline", token=ADMIN)
check("a job slurmctld does not know has no timeline (404)", st == 404, (st, body))

# checkpoints: indexed from storage; users see only theirs
root_ck = os.environ["ROOT_CKPT"]
listed = listing_with(root_ck, ADMIN)
check("admin sees the checkpoint (indexed from storage)", listed is not None, listed)
st, body = call("GET", "/v1/checkpoints", token=user_token)
check("user does not see root's checkpoint", st == 200 and root_ck not in {c["id"] for c in body}, body)
st, body = call("GET", f"/v1/checkpoints/{root_ck}", token=user_token)
check("user reading root's checkpoint: 404, nothing leaks", st == 404 and root_ck in body["error"]["message"]
      and "root" not in json.dumps(body).replace(root_ck, ""), (st, body))
st, body = call("DELETE", f"/v1/checkpoints/{root_ck}", token=user_token)
check("user deleting root's checkpoint: 404", st == 404, (st, body))
st, body = call("POST", f"/v1/checkpoints/{root_ck}/restore", token=user_token, body={})
check("user restoring root's checkpoint: 404", st == 404, (st, body))
st, body = call("GET", f"/v1/checkpoints/{root_ck}", token=ADMIN)
check("inspect: good, manifest with MAC, no workload details",
      st == 200 and body["state"] == "good" and "mac" in body["manifest"] and "workload" not in body["manifest"], body)
st, body = call("GET", "/v1/checkpoints?label=nolabel", token=ADMIN)
check("filter by label", st == 200 and body == [], body)

# restore through the node daemon: an operation the agent claims and completes
st, body, done = restore_through_agent(root_ck, ADMIN)
check("restore request: 202 with a queued operation", st == 202 and body["kind"] == "restore", (st, body))
check("the node daemon restored it", done is not None and done["state"] == "done", done)
check("the operation says how long each phase of the restore took",
      done is not None and [p["phase"] for p in done.get("phases", [])] == ["unpack", "prepare", "restore", "verify"]
      and all(isinstance(p["ms"], int) and p["ms"] >= 0 for p in done["phases"]), done)
st, body = call("POST", f"/v1/agent/operations/{done and done['id']}", token=ADMIN,
                body={"state": "done", "phases": [{"phase": "freeze", "ms": -1}]})
check("an agent's report with a bad phase: 400 naming what is valid",
      st == 400 and "phases: want" in body["error"]["message"], (st, body))
st, body = call("POST", f"/v1/agent/operations/{done and done['id']}", token=ADMIN, body={"state": "queued"})
check("an agent's report cannot queue an operation again: 400 naming the states it may report",
      st == 400 and "valid: running, done, failed" in body["error"]["message"], (st, body))
st, body = call("GET", "/v1/operations?state=finished", token=ADMIN)
check("operations by a state that is none: 400 naming the states",
      st == 400 and "queued, running, done, failed" in body["error"]["message"], (st, body))
st, body = call("GET", "/v1/operations?state=done", token=ADMIN)
check("operations by state", st == 200 and body and all(o["state"] == "done" for o in body), body)
st, body = call("GET", "/v1/operations", token=user_token)
check("user does not see root's operations", st == 200 and body == [], body)

# the user's own checkpoint: seen by its owner and the admin, restored for its owner
user_ck = os.environ["USER_CKPT"]
mine = listing_with(user_ck, user_token)
check("user sees own checkpoint and only it", mine is not None and {c["owner"] for c in mine} == {"nobody"}, mine)
st, body = call("GET", f"/v1/checkpoints/{user_ck}", token=user_token)
check("user inspects own checkpoint: good", st == 200 and body["state"] == "good" and body["owner"] == "nobody",
      (st, body))
st, body = call("GET", "/v1/checkpoints", token=ADMIN)
check("admin sees both users' checkpoints", st == 200 and {root_ck, user_ck} <= {c["id"] for c in body}, body)
whole = [c["id"] for c in body]
paged = pages("/v1/checkpoints", ADMIN, 1)
check("checkpoints one a page: every one once, in the whole list's order",
      paged is not None and all(len(p) == 1 for p in paged) and [p[0]["id"] for p in paged] == whole, (paged, whole))
paged = pages("/v1/checkpoints?user=nobody", ADMIN, 1000)
check("a page larger than the list: one page, with the filter", paged is not None and len(paged) == 1
      and {c["owner"] for c in paged[0]} == {"nobody"}, paged)
st, body = call("GET", "/v1/checkpoints?limit=0", token=ADMIN)
check("limit 0: 400 naming the range", st == 400 and "1 to 1000" in body["error"]["message"], (st, body))
st, body = call("GET", "/v1/checkpoints?limit=1&after=yesterday", token=ADMIN)
check("an after no page gave: 400", st == 400 and "X-Next-After" in body["error"]["message"], (st, body))
st, body = call("GET", "/v1/jobs?limit=1&after=x", token=ADMIN)
check("jobs: an after that is not a job id: 400", st == 400 and "not a job id" in body["error"]["message"], (st, body))
st, body, done = restore_through_agent(user_ck, user_token)
check("user restores own checkpoint: 202", st == 202 and body["owner"] == "nobody", (st, body))
check("the node daemon restored it for the user", done is not None and done["state"] == "done", done)
st, body = call("GET", "/v1/operations", token=user_token)
check("user sees own operation, not root's", st == 200 and [o["id"] for o in body] == [done and done["id"]], body)

# policies: CRUD, validation, ownership
st, body = call("POST", "/v1/policies", token=user_token, body={"name": "nightly", "interval_seconds": 3600,
                                                               "selector": {"label": "train"}})
check("user creates a policy; owner is the user", st == 201 and body["owner"] == "nobody", (st, body))
pid = body["id"]
st, body = call("POST", "/v1/policies", token=user_token, body={"name": "nightly", "interval_seconds": 3600})
check("duplicate policy name: 409", st == 409 and body["error"]["code"] == "already_exists", (st, body))
st, body = call("POST", "/v1/policies", token=user_token, body={"name": "x", "interval_seconds": 1})
check("bad interval: 400 naming the valid range", st == 400 and "10 to 2592000" in body["error"]["message"], (st, body))
st, body = call("POST", "/v1/policies", token=user_token, body={"name": "x", "interval_seconds": 60, "selector": {"nodes": "a"}})
check("unknown selector key: 400 listing the valid ones", st == 400 and "valid: job_id" in body["error"]["message"], (st, body))
st, body = call("POST", "/v1/policies", token=user_token, body=None)
check("empty body: 400", st == 400, (st, body))
deep = b'{"name": "x", "interval_seconds": 60, "selector": ' + b"[" * 200000 + b"]" * 200000 + b"}"
st, body = call("POST", "/v1/policies", token=user_token, raw=deep)
check("a body nested 200000 levels deep: 400", st == 400 and "nested deeper" in body["error"]["message"], (st, body))
st, body = call("GET", "/v1/health")
check("and the controller lives on", st == 200, (st, body))
st, body = call("POST", "/v1/tokens", token=ADMIN, body={"user": 5})
check("a field of the wrong type: 400 naming it, not 500", st == 400 and body["error"]["code"] == "invalid_argument"
      and 'body field "user" must be a string' in body["error"]["message"], (st, body))
st, body = call("POST", "/v1/agent/workloads", token=ADMIN, body={"node": "n9", "workloads": [{"job_id": "7"}]})
check("an agent's workload of the wrong type: 400 naming the field",
      st == 400 and 'workload field "job_id" must be an integer' in body["error"]["message"], (st, body))
st, body = call("POST", "/v1/agent/register", token=ADMIN, body={"node": "n9", "version": 1})
check("an agent's version that is no string: 400", st == 400 and '"version" must be a string' in body["error"]["message"],
      (st, body))
st, body = call("GET", "/v1/jobs?enabled=yes", token=ADMIN)
check("?enabled= takes true or false", st == 400, (st, body))
st, body = call("PUT", f"/v1/policies/{pid}", token=user_token, body={"name": "nightly", "interval_seconds": 7200,
                                                                      "enabled": False})
check("update a policy", st == 200 and body["interval_seconds"] == 7200 and body["enabled"] is False, (st, body))
st, body = call("POST", "/v1/policies", token=ADMIN, body={"name": "admins", "interval_seconds": 600})
admin_pid = body["id"]
st, body = call("GET", "/v1/policies", token=user_token)
check("user lists only own policies", st == 200 and [p["id"] for p in body] == [pid], body)
st, body = call("GET", f"/v1/policies/{admin_pid}", token=user_token)
check("user reading the admin's policy: 404", st == 404, (st, body))
st, body = call("DELETE", f"/v1/policies/{admin_pid}", token=user_token)
check("user deleting the admin's policy: 404", st == 404, (st, body))
st, _ = call("DELETE", f"/v1/policies/{pid}", token=user_token)
check("delete own policy: 204", st == 204)
st, body = call("GET", f"/v1/policies/{pid}", token=user_token)
check("deleted policy is gone", st == 404, (st, body))
call("DELETE", f"/v1/policies/{admin_pid}", token=ADMIN)

# jobs
st, body = call("POST", "/v1/jobs/999999/checkpoint", token=ADMIN, body={})
check("checkpoint of an unknown job: 404", st == 404, (st, body))
st, body = call("GET", "/v1/no/such/path", token=ADMIN)
check("unknown API path: 404 in JSON", st == 404 and isinstance(body, dict) and "error" in body, (st, body))

# checkpoint deletion goes to storage
root_ck_path = os.environ["CKPT_DIR"] + f"/root/api-root/{root_ck}"
check("the checkpoint to delete is in storage", os.path.exists(root_ck_path + "/manifest.json"), root_ck_path)
st, _ = call("DELETE", f"/v1/checkpoints/{root_ck}", token=ADMIN)
check("delete a checkpoint: 204", st == 204)
st, body = call("GET", f"/v1/checkpoints/{root_ck}", token=ADMIN)
check("the deleted checkpoint is gone", st == 404, (st, body))
check("and gone from storage", not os.path.exists(root_ck_path))

# revoked token
st, _ = call("DELETE", f"/v1/tokens/{user_token_id}", token=ADMIN)
st, body = call("GET", "/v1/whoami", token=user_token)
check("a deleted token is refused", st == 401, (st, body))

print(f"api_test.py: {'FAILED ' + str(failed) if failed else 'all passed'}")
sys.exit(1 if failed else 0)
