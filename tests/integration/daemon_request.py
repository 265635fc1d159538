#!/usr/bin/python3
# daemon_request.py JSON: sends one raw request to the node daemon ($CEDANA_DAEMON_SOCKET) and
# prints the result line (with PRINT_PROGRESS=1 the progress lines too, as they come). Exit 0
# when the result is ok, 1 otherwise. For requests the CLI does not make (a job id, slurmd's
# registration, a dump's deadline), to test what the daemon accepts from whom.
import json, os, socket, sys

request = json.loads(sys.argv[1])
request.setdefault("v", 1)
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(os.environ.get("CEDANA_DAEMON_SOCKET", "/run/cedana/cedana.sock"))
    s.sendall((json.dumps(request) + "\n").encode())
    s.settimeout(float(os.environ.get("REQUEST_TIMEOUT", "30")))
    data = b""
    printed = 0
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        lines = [l for l in data.split(b"\n") if l]
        if os.environ.get("PRINT_PROGRESS") == "1":
            for l in lines[printed:len(lines) if data.endswith(b"\n") else -1]:
                if json.loads(l).get("type") == "progress":
                    print(json.dumps(json.loads(l)), flush=True)
                printed += 1
        if lines and data.endswith(b"\n") and json.loads(lines[-1]).get("type") == "result":
            break
result = json.loads([l for l in data.split(b"\n") if l][-1])
print(json.dumps(result))
sys.exit(0 if result.get("ok") else 1)
