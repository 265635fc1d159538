#!/usr/bin/env python3
"""The controller under abuse by anyone who reaches its port (tests/controller/controller_test.sh
starts it): a 1 GiB request body is refused with 413 before any token is looked at, and 100 slow
clients (each trickling one header byte a second) and 100 idle ones do not keep a token holder's
requests from being answered.

Env: CONTROLLER (http://127.0.0.1:PORT), ADMIN_TOKEN. Prints PASS/FAIL lines; exits 1 if
anything failed.
"""
import os
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request

BASE = os.environ["CONTROLLER"]
ADMIN = os.environ["ADMIN_TOKEN"]
HOST, PORT = urllib.parse.urlsplit(BASE).hostname, urllib.parse.urlsplit(BASE).port
failed = 0


def check(what, ok, detail=""):
    global failed
    print(f"PASS: {what}" if ok else f"FAIL: {what} {detail}")
    failed += 0 if ok else 1


def status_line(sock, seconds):
    sock.settimeout(seconds)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


def whoami(token, seconds=5):
    req = urllib.request.Request(BASE + "/v1/whoami")
    req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=seconds) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return str(e)


# A 1 GiB body, no token: 413 before the server reads a byte of it into memory or asks who we
# are. The body is sent as the server reads it; the answer must come with the headers' reply.
big = socket.create_connection((HOST, PORT))
big.sendall(b"POST /v1/policies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1073741824\r\n\r\n")
stop_sending = threading.Event()


def send_body():
    zeros = b"0" * (1 << 20)
    try:
        for _ in range(1024):
            if stop_sending.is_set():
                return
            big.sendall(zeros)
    except OSError:
        pass


sender = threading.Thread(target=send_body, daemon=True)
sender.start()
line = status_line(big, 30)
stop_sending.set()
check("a 1 GiB body without a token is refused with 413", " 413 " in line + " ", line)
big.close()

# 100 slow clients and 100 idle ones, held open while a token holder asks.
slow = []
for i in range(100):
    s = socket.create_connection((HOST, PORT))
    s.sendall(b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    slow.append(s)
idle = [socket.create_connection((HOST, PORT)) for _ in range(100)]
stop_trickle = threading.Event()


def trickle():
    while not stop_trickle.is_set():
        for s in slow:
            try:
                s.send(b"a")
            except OSError:
                pass
        time.sleep(1)


threading.Thread(target=trickle, daemon=True).start()
time.sleep(1)
answers = [whoami(ADMIN) for _ in range(20)]
check("a token holder's requests are answered while 200 clients hold connections",
      answers == [200] * 20, answers)
check("a request without a token is still answered (401)", whoami("wrong-token") == 401)
stop_trickle.set()
for s in slow + idle:
    s.close()
sys.exit(1 if failed else 0)
