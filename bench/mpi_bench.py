#!/usr/bin/python3
"""The 2-rank MPI job's checkpoint against a plain `criu dump` of the same job, in one run.

The job is tests/workloads/mpi_ring.c (ranks exchanging data every 0.1 s), launched by OpenMPI's
mpirun (shared memory, then TCP) and by MPICH's mpiexec, the launcher's whole tree dumped once
it has run 10 steps. The baseline is what a user would type: `criu dump --tcp-established --network-lock nftables`
(this machine has no iptables) of the launcher's tree to a local dir, then `sync` (the tree is frozen for all of CRIU's run). Ours
is `cedana dump` with the defaults (zstd, one stream, a committed local checkpoint); the frozen
time is CRIU's part of it, from the node daemon's log. Both kill the job after the dump, as a
preemption does.

Usage (as root, after scripts/setup.sh):  sudo bench/mpi_bench.py [--runs 3]
Prints a Markdown section for BENCHMARKS.md.
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import (CRIU, CRIU_ENV, ROOT, Daemon, descendants, fmt_s, kill_tree_of, log, reap_all, run,  # noqa: E402
                       stats, timed, wait_gone)

STEPS = 100000  # longer than any round: every round stops it
OPENMPI = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "2"]


def launchers(home):
    ring = os.path.join(ROOT, "tests/workloads/mpi_ring.c")
    run(["mpicc.openmpi", "-O2", "-o", f"{home}/ring_openmpi", ring])
    run(["mpicc.mpich", "-O2", "-o", f"{home}/ring_mpich", ring])
    return {"OpenMPI, shared memory (vader)": OPENMPI + ["--mca", "btl", "vader,self", f"{home}/ring_openmpi"],
            "OpenMPI, TCP": OPENMPI + ["--mca", "btl", "tcp,self", f"{home}/ring_openmpi"],
            "MPICH (hydra)": ["mpiexec.mpich", "-n", "2", f"{home}/ring_mpich"]}


def at_step(path, n, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and open(path).read().count("step ") >= n:
            return
        time.sleep(0.05)
    raise RuntimeError(f"the MPI job did not reach step {n} ({path})")


def lock_tables():
    listing = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    return set(re.findall(r"^table inet (CRIU-\S+)$", listing, re.M))


def baseline_once(argv, work):
    out = os.path.join(work, "plain.out")
    # What cedana gives every workload (docs/workloads.md), so that both dump the same job: an
    # IPC namespace of its own (CRIU dumps SysV segments, which MPICH uses, only as a
    # namespace's) and UCX's shared memory by name, not through /proc. The tree dumped is the
    # first process in the namespace.
    proc = subprocess.Popen(["unshare", "--ipc", "--fork", *argv, str(STEPS)], stdin=subprocess.DEVNULL,
                            stdout=open(out, "w"), stderr=subprocess.STDOUT, start_new_session=True,
                            env=dict(os.environ, UCX_POSIX_USE_PROC_LINK="n"))
    at_step(out, 10)
    img = os.path.join(work, "img")
    os.makedirs(img)
    tree = [proc.pid] + descendants(proc.pid)
    root = descendants(proc.pid)[0]
    tables_before = lock_tables()
    try:
        dump_t, _ = timed(lambda: run([CRIU, "dump", "-t", str(root), "-D", img, "--shell-job", "--tcp-established",
                                       "--network-lock", "nftables", "-o", "dump.log"], env=CRIU_ENV))
    except subprocess.CalledProcessError:
        kill_tree_of(proc.pid)
        proc.wait()
        errors = [l for l in open(os.path.join(img, "dump.log")) if "Error" in l and "RLIMIT" not in l]
        raise RuntimeError(f"criu dump of {' '.join(argv)} failed: {''.join(errors[-3:])}")
    proc.wait()
    wait_gone(tree)
    sync_t, _ = timed(lambda: run(["sync", "-f", os.path.join(img, "inventory.img")]))
    # CRIU leaves its network lock (an nftables table of its own) for a restore to lift: lift
    # it by hand, as a user would, so that rounds do not pile tables up (not timed).
    for table in lock_tables() - tables_before:
        subprocess.run(["nft", "delete", "table", "inet", table], check=False)
    size = sum(os.path.getsize(os.path.join(img, f)) for f in os.listdir(img))
    return {"frozen": dump_t, "checkpoint": dump_t + sync_t, "size": size}


def ours_once(d, argv):
    out = os.path.join(d.home, "mpi.out")
    if os.path.exists(out):
        os.unlink(out)
    wid = d.cli("run", "--label", "mpi-bench", "--output", out, "--", *argv, str(STEPS))
    at_step(out, 10)
    d.cli("dump", wid)
    frozen, total, _ = d.last_dump_timing()
    return {"frozen": frozen, "checkpoint": total}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: run as root (CRIU)")
    ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    home = tempfile.mkdtemp(prefix="cedana-mpi-bench.", dir="/var/tmp")
    rows = []
    d = Daemon(home, {})
    try:
        for name, argv in launchers(home).items():
            base, ours = [], []
            for _ in range(args.runs):  # alternate, so that drift of the machine hits both alike
                log(f"{name}: baseline")
                work = tempfile.mkdtemp(dir=home)
                base.append(baseline_once(argv, work))
                shutil.rmtree(work)
                reap_all()
                log(f"{name}: cedana")
                ours.append(ours_once(d, argv))
                reap_all()
            b = {k: stats([r[k] for r in base]) for k in base[0]}
            o = {k: stats([r[k] for r in ours]) for k in ours[0]}
            rows.append((name, b, o))
    finally:
        d.stop()
        reap_all()
        shutil.rmtree(home, ignore_errors=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"Measured {when} with `sudo bench/mpi_bench.py --runs {args.runs}`: the 2-rank MPI ring "
          f"(tests/workloads/mpi_ring.c) dumped at step 10, medians of {args.runs} alternating runs (min-max).\n")
    print("| launcher, transport | plain `criu dump` + sync: frozen = checkpoint | images | cedana: frozen | "
          "cedana: checkpoint (committed) | frozen ratio | checkpoint ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, b, o in rows:
        print(f"| {name} | {fmt_s(b['checkpoint'])} | {b['size']['median'] / (1 << 20):.1f} MiB | {fmt_s(o['frozen'])} | "
              f"{fmt_s(o['checkpoint'])} | {o['frozen']['median'] / b['frozen']['median']:.2f} | "
              f"{o['checkpoint']['median'] / b['checkpoint']['median']:.2f} |")


if __name__ == "__main__":
    main()
