#!/usr/bin/env python3
"""Two processes of one tree talking over a loopback TCP connection: the parent listens, the
child connects; every 0.1 s the parent sends a number, the child sends it back plus one, and
the parent prints "tick N". A dumped and restored tree must go on from where it was. With a
count (argv), it prints "done" after that many ticks and ends."""
import os
import socket
import sys
import time

ticks = int(sys.argv[1]) if len(sys.argv) > 1 else None

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
port = server.getsockname()[1]
if os.fork() == 0:
    server.close()
    conn = socket.create_connection(("127.0.0.1", port))
    reader = conn.makefile()
    for line in reader:
        conn.sendall(f"{int(line) + 1}\n".encode())
    os._exit(0)
conn, _ = server.accept()
server.close()  # only the connection stays: no listening socket in the tree
reader = conn.makefile()
n = 0
while ticks is None or n < ticks:
    conn.sendall(f"{n}\n".encode())
    n = int(reader.readline())
    print(f"tick {n - 1}", flush=True)
    time.sleep(0.1)
print("done", flush=True)
