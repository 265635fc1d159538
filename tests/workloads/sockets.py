#!/usr/bin/env python3
"""Serves its tick count on four sockets, listening TCP and bound UDP on IPv4 and IPv6 loopback
(ports PORT..PORT+3 from argv), and prints "tick N" every 0.1 s. A dumped and restored copy must
answer on all four and count on. Each TCP client is answered and closed at once, so that no
connected socket outlives one pass of the loop."""
import select
import socket
import sys
import time

base = int(sys.argv[1])
listeners, datagrams = [], []
for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    tcp = socket.socket(family, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((host, base + len(listeners)))
    tcp.listen(8)
    listeners.append(tcp)
for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    udp = socket.socket(family, socket.SOCK_DGRAM)
    udp.bind((host, base + 2 + len(datagrams)))
    datagrams.append(udp)

tick, next_tick = 0, time.monotonic()
while True:
    ready, _, _ = select.select(listeners + datagrams, [], [], max(0.0, next_tick - time.monotonic()))
    for s in ready:
        if s in listeners:
            conn, _ = s.accept()
            conn.sendall(f"tick {tick}\n".encode())
            conn.close()
        else:
            _, peer = s.recvfrom(64)
            s.sendto(f"tick {tick}\n".encode(), peer)
    if time.monotonic() >= next_tick:
        print(f"tick {tick}", flush=True)
        tick += 1
        next_tick += 0.1
