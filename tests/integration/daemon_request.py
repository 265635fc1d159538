#!/usr/bin/python3
# daemon_request.py JSON: sends one raw request to the node daemon ($CEDANA_DAEMON_SOCKET) and
# prints the result line. Exit 0 when the result is ok, 1 otherwise. For requests the CLI does
# not make (a job id, slurmd's registration), to test what the daemon accepts from whom.
import json, os, socket, sys

request = json.loads(sys.argv[1])
request.setdefault("v", 1)
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.settimeout(30)
    s.connect(os.environ.get("CEDANA_DAEMON_SOCKET", "/run/cedana/cedana.sock"))
    s.sendall((json.dumps(request) + "\n").encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        lines = [l for l in data.split(b"\n") if l]
        if lines and json.loads(lines[-1]).get("type") == "result":
            break
result = json.loads([l for l in data.split(b"\n") if l][-1])
print(json.dumps(result))
sys.exit(0 if result.get("ok") else 1)
