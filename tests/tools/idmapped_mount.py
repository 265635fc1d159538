#!/usr/bin/python3
"""Mounts SRC at TARGET as an idmapped bind mount that maps only the given uids and gids.

The tests' stand-in for an NFS export with root_squash: root's uid has no mapping on this
mount, so root creates nothing there (EOVERFLOW) and, without its file capabilities (as
under fsuid != 0), reads nothing it does not own; the mapped users work as on any directory.
Needs idmapped mounts (Linux 5.12+) on the filesystem of SRC (ext4; tmpfs since 6.3).
Unmount with `umount TARGET`.

  idmapped_mount.py SRC TARGET UID[,UID...] GID[,GID...]
"""
import ctypes
import os
import sys

SYS_open_tree, SYS_move_mount, SYS_mount_setattr = 428, 429, 442
CLONE_NEWUSER = 0x10000000
OPEN_TREE_CLONE = 1
AT_FDCWD, AT_EMPTY_PATH = -100, 0x1000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_IDMAP = 0x00100000

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def check(ret, what):
    if ret < 0:
        sys.exit(f"idmapped_mount: {what}: {os.strerror(ctypes.get_errno())}")
    return ret


def user_namespace(uids, gids):
    """An fd of a new user namespace mapping each id to itself (written by us, root, from
    outside: no newuidmap needed)."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(done_w)
        ok = libc.unshare(CLONE_NEWUSER) == 0
        os.write(ready_w, b"1" if ok else b"0")
        os.read(done_r, 1)
        os._exit(0)
    os.close(ready_w)
    os.close(done_r)
    if os.read(ready_r, 1) != b"1":
        sys.exit("idmapped_mount: unshare(CLONE_NEWUSER) failed")
    for name, ids in (("uid_map", uids), ("gid_map", gids)):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write("".join(f"{i} {i} 1\n" for i in ids))
    fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    os.close(done_w)
    os.waitpid(pid, 0)
    return fd


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, target = sys.argv[1], sys.argv[2]
    uids = [int(x) for x in sys.argv[3].split(",")]
    gids = [int(x) for x in sys.argv[4].split(",")]
    userns = user_namespace(uids, gids)
    tree = check(libc.syscall(SYS_open_tree, AT_FDCWD, src.encode(),
                              OPEN_TREE_CLONE | os.O_CLOEXEC), f"open_tree {src}")
    attr = MountAttr(MOUNT_ATTR_IDMAP, 0, 0, userns)
    check(libc.syscall(SYS_mount_setattr, tree, b"", AT_EMPTY_PATH, ctypes.byref(attr),
                       ctypes.sizeof(attr)), "mount_setattr(MOUNT_ATTR_IDMAP)")
    check(libc.syscall(SYS_move_mount, tree, b"", AT_FDCWD, target.encode(),
                       MOVE_MOUNT_F_EMPTY_PATH), f"move_mount to {target}")


if __name__ == "__main__":
    main()
