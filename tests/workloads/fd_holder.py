#!/usr/bin/env python3
"""A process that holds one file object the way an attacker's (or a real program's) would, for
the security suite (tests/integration/security_test.sh).

    fd_holder.py MODE PATH DIR

MODE is what it holds on PATH: `read` (O_RDONLY), `append` (O_WRONLY|O_APPEND), `map` (a shared
writable mapping), `cwd` (its working directory), `fifo` (a named FIFO, O_RDWR), `unix` (a
listening unix socket bound at PATH) or `ghost` (a file it deleted after opening). It writes its
pid to DIR/pid and then waits. Once DIR/go exists (the suite creates it after the restore) it
uses what it holds every 0.2 s and reports to DIR/seen (written by path, never held open):
`read`: the file's first bytes; `append`: appends a line; `map`: writes into the mapping;
`cwd`: lists the directory; `fifo`, `unix`, `ghost`: says it is alive.
"""
import mmap
import os
import socket
import sys
import time

mode, path, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
# Only what it holds on purpose: a descriptor inherited from the harness (ctest's log, opened by
# root) is one the user could not open, and a restore would rightly refuse it.
os.closerange(3, 1 << 16)
held = None
if mode == "read":
    held = os.open(path, os.O_RDONLY)
elif mode == "append":
    held = os.open(path, os.O_WRONLY | os.O_APPEND)
elif mode == "map":
    fd = os.open(path, os.O_RDWR)
    held = mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    os.close(fd)
elif mode == "cwd":
    os.chdir(path)
elif mode == "fifo":
    held = os.open(path, os.O_RDWR)
elif mode == "unix":
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.bind(path)
    held.listen(1)
elif mode == "ghost":
    held = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(held, b"ghost data\n")
    os.unlink(path)
else:
    sys.exit(f"unknown mode {mode}")

with open(os.path.join(out_dir, "pid.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.rename(os.path.join(out_dir, "pid.tmp"), os.path.join(out_dir, "pid"))

while True:
    time.sleep(0.2)
    if not os.path.exists(os.path.join(out_dir, "go")):
        continue
    if mode == "read":
        seen = os.pread(held, 4096, 0)
    elif mode == "append":
        os.write(held, b"appended by the restored process\n")
        seen = b"appended\n"
    elif mode == "map":
        held[0:8] = b"MAPWRITE"
        seen = b"mapped write\n"
    elif mode == "cwd":
        seen = ("\n".join(sorted(os.listdir("."))) + "\n").encode()
    else:
        seen = b"alive\n"
    tmp = os.path.join(out_dir, "seen.tmp")
    with open(tmp, "wb") as f:
        f.write(seen)
    os.rename(tmp, os.path.join(out_dir, "seen"))
