#!/usr/bin/env python3
"""A client of a server outside the job (port in argv): every 0.1 s it sends its tick and
prints "tick N" once the server echoes it. When the connection breaks it says so ("lost: ...")
and connects again, as a client that survives its server's restarts does. With a count
(argv[2]), it prints "done" after that many ticks and ends."""
import socket
import sys
import time

port = int(sys.argv[1])
ticks = int(sys.argv[2]) if len(sys.argv) > 2 else None


def connect():
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    return conn, conn.makefile()


conn, reader = connect()
n = 0
while ticks is None or n < ticks:
    try:
        conn.sendall(f"{n}\n".encode())
        echoed = reader.readline()
        if not echoed:
            raise ConnectionError("closed by the server")
        print(f"tick {int(echoed)}", flush=True)
        n += 1
    except OSError as e:
        print(f"lost: {e}", flush=True)
        conn, reader = connect()
        print("reconnected", flush=True)
    time.sleep(0.1)
print("done", flush=True)
