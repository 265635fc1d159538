#!/usr/bin/env python3
"""A TCP server on 127.0.0.1 (port in argv) that echoes every line it gets, for the clients in
tcp_client.py; run outside the workloads, as a job's database or tracking server would be."""
import socketserver
import sys


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            self.wfile.write(line)


socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
