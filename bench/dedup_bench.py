#!/usr/bin/python3
"""Deduplicated periodic checkpoints (checkpoint.dedup) against full ones, in one run.

The job is bench/workloads/memfill (typical 3:1 data), which rewrites a contiguous tenth of its
memory on SIGUSR1, as a step of a simulation changes part of its state.

- Lineage: a full checkpoint of the job (node daemon without dedup), then, with dedup, a first
  policy checkpoint (stores everything), a tenth of the memory changed, and a second one: its
  stored bytes and time against the full checkpoint's, and the restore of each.
  The same lineage with deduplicated direct dumps (checkpoint.dedup and checkpoint.direct: the
  pages are cut into chunks as CRIU hands them over, no images dir).
- Grace time: the largest job whose preemption checkpoint (the job is killed once committed,
  as SLURM's preemption does) commits within --grace seconds, without dedup, and with dedup
  (images dir, then direct) after a policy checkpoint --policy-gap seconds earlier (a tenth of
  memory changed between).

Every dump uses lz4 and 4 streams to a local checkpoint dir. Usage (as root, after
scripts/setup.sh):  sudo bench/dedup_bench.py [--runs 2] [--mib 4096] [--sizes 2048,4096,6144,8192]
Prints a Markdown section for BENCHMARKS.md.
"""
import argparse
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import (Daemon, drop_caches, fmt_s, log, prepare, reap_all, run, stats, timed,  # noqa: E402
                       wait_for_output, wait_ready)

CODEC, STREAMS = "lz4", 4
MiB = 1 << 20


class Job:
    """memfill under `cedana run` on daemon `d`."""

    def __init__(self, d, memfill, mib):
        self.d, self.out = d, os.path.join(d.home, "job.out")
        if os.path.exists(self.out):
            os.unlink(self.out)
        self.id = d.cli("run", "--label", "bench", "--output", self.out, "--", memfill, str(mib), "typical")
        wait_ready(self.out, 600)
        self.changes = 0

    def change_a_tenth(self):
        self.changes += 1
        self.d.cli("kill", "--signal", "10", self.id)  # SIGUSR1 (the job is its PID namespace's init)
        wait_for_output(self.out, rf"changed {self.changes}\b", 600)

    def dump(self, leave_running=True):
        """One checkpoint: (id, {checkpoint s, frozen s, stored bytes, chunks new/all})."""
        args = ["dump", self.id, "--compression", CODEC, "--streams", str(STREAMS)]
        ck = self.d.cli(*(args + ["--leave-running"] if leave_running else args))
        line = [l for l in open(f"{self.d.home}/daemon.log") if f" dump: checkpoint {ck} " in l][-1]
        m = re.search(r"(\d+) bytes stored, dump (\d+) ms, total (\d+) ms", line)
        r = {"stored": int(m.group(1)), "frozen": int(m.group(2)) / 1000, "checkpoint": int(m.group(3)) / 1000}
        # What dedup changes: packing, storing and committing, after CRIU (leave-running: CRIU's
        # time is the frozen time). CRIU's own time swings with this VM's first touch of memory.
        r["after_criu"] = r["checkpoint"] - r["frozen"]
        chunks = re.search(r"deduplicated: (\d+) of (\d+) chunks new", line)
        if chunks:
            r["chunks_new"], r["chunks"] = int(chunks.group(1)), int(chunks.group(2))
        return ck, r

    def kill(self):
        self.d.cli("kill", "--wait", self.id)


def restore_time(d, ck):
    drop_caches()
    t, rid = timed(lambda: d.cli("restore", ck))
    d.cli("kill", rid)
    return t


def delete_all(d):
    for c in d.checkpoints():
        d.cli("checkpoints", "delete", c["id"])


def warm_memory(mib):
    """Touches `mib` of memory once, in a child that then exits: this VM's host hands out pages
    never used before at a fraction of memory speed, and whichever dump first needs them would
    be measured slower (the full one, run first)."""
    log(f"touching {mib} MiB of memory once")
    run([sys.executable, "-c", f"b = bytearray({mib} << 20); b[::4096] = b'x' * ({mib} << 8)"])


def full_once(plain, memfill, mib):
    job = Job(plain, memfill, mib)
    ck, full = job.dump()
    job.kill()
    full["restore"] = restore_time(plain, ck)
    delete_all(plain)
    return full


def dedup_once(dedup, memfill, mib):
    job = Job(dedup, memfill, mib)
    _, first = job.dump()
    job.change_a_tenth()
    ck, second = job.dump()
    job.kill()
    second["restore"] = restore_time(dedup, ck)
    delete_all(dedup)
    return first, second


def lineage_once(plain, dedup, direct, memfill, mib, plain_first):
    if plain_first:
        full = full_once(plain, memfill, mib)
        first, second = dedup_once(dedup, memfill, mib)
        first_direct, second_direct = dedup_once(direct, memfill, mib)
    else:
        first_direct, second_direct = dedup_once(direct, memfill, mib)
        first, second = dedup_once(dedup, memfill, mib)
        full = full_once(plain, memfill, mib)
    reap_all()
    return {"full": full, "first": first, "second": second, "first_direct": first_direct,
            "second_direct": second_direct}


def preemption_once(d, memfill, mib, policy_gap):
    """The preemption checkpoint's time; with policy_gap, after a policy checkpoint that long
    before it and a tenth of the memory changed."""
    job = Job(d, memfill, mib)
    if policy_gap is not None:
        job.dump()
        time.sleep(policy_gap)
        job.change_a_tenth()
    _, r = job.dump(leave_running=False)
    delete_all(d)
    reap_all()
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--mib", type=int, default=4096, help="the lineage's job size")
    ap.add_argument("--sizes", default="2048,4096,6144,8192", help="job sizes (MiB) tried against the grace time")
    ap.add_argument("--grace", type=float, default=15)
    ap.add_argument("--policy-gap", type=float, default=60)
    ap.add_argument("--work-dir", help="checkpoint.work_dir of both daemons (default: on the checkpoint dir's disk)")
    args = ap.parse_args()
    # A short prefix: the restore's image-streamer socket lives under the work dir in it.
    home, memfill = prepare("cdd.")
    daemons = {}
    try:
        for name, dedup, direct in (("plain", "0", "0"), ("dedup", "1", "0"), ("direct", "1", "1")):
            os.makedirs(f"{home}/{name}")
            extra = {"CEDANA_CHECKPOINT_DEDUP": dedup, "CEDANA_CHECKPOINT_DIRECT": direct}
            if args.work_dir:
                extra["CEDANA_CHECKPOINT_WORK_DIR"] = os.path.join(args.work_dir, name)
            daemons[name] = Daemon(f"{home}/{name}", extra)
        plain, dedup, direct = daemons["plain"], daemons["dedup"], daemons["direct"]
        sizes = [int(v) for v in args.sizes.split(",")]
        # A job and its images dir (page cache or tmpfs), and the checkpoint written from it.
        available = int(re.search(r"MemAvailable:\s+(\d+)", open("/proc/meminfo").read()).group(1)) >> 10
        warm_memory(min(3 * max(sizes + [args.mib]), available - 1024))
        lineage = []
        for i in range(args.runs):  # alternating which goes first
            log(f"lineage {args.mib} MiB: run {i + 1}")
            lineage.append(lineage_once(plain, dedup, direct, memfill, args.mib, plain_first=i % 2 == 0))
        grace = []
        for mib in sizes:
            log(f"grace: {mib} MiB")
            without = preemption_once(plain, memfill, mib, None)
            with_policy = preemption_once(dedup, memfill, mib, args.policy_gap)
            with_policy_direct = preemption_once(direct, memfill, mib, args.policy_gap)
            grace.append((mib, without, with_policy, with_policy_direct))
    finally:
        for d in daemons.values():
            d.stop()
        reap_all()
        shutil.rmtree(home, ignore_errors=True)
    report(args, lineage, grace)


def report(args, lineage, grace):
    def col(part, key):
        return stats([r[part][key] for r in lineage])

    full_t, full_b = col("full", "checkpoint"), col("full", "stored")
    second_t, second_b = col("second", "checkpoint"), col("second", "stored")
    bytes_ratio = second_b["median"] / full_b["median"]
    time_ratio = second_t["median"] / full_t["median"]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    work = f"`checkpoint.work_dir` {args.work_dir}" if args.work_dir else "`checkpoint.work_dir` on the local disk"
    print(f"## Deduplicated periodic checkpoints\n\nMeasured {when} with `sudo bench/dedup_bench.py --runs {args.runs}"
          f"{' --work-dir ' + args.work_dir if args.work_dir else ''}`: memfill's typical data, "
          f"{CODEC} x{STREAMS} to a local checkpoint dir, {work}; medians of {args.runs} runs with min-max.\n")
    print(f"{args.mib} MiB job; between the two policy checkpoints a contiguous tenth of its memory changed.\n")
    print("| checkpoint | checkpoint time | frozen (CRIU) | after CRIU | stored | chunks new | restore |")
    print("|---|---|---|---|---|---|---|")
    for part, name in (("full", "full (checkpoint.dedup 0)"), ("first", "first policy checkpoint (dedup)"),
                       ("second", "second policy checkpoint (dedup)"),
                       ("first_direct", "first policy checkpoint (dedup, direct)"),
                       ("second_direct", "second policy checkpoint (dedup, direct)")):
        chunks = f"{col(part, 'chunks_new')['median']:.0f} of {col(part, 'chunks')['median']:.0f}" \
            if "chunks" in lineage[0][part] else "-"
        restore = fmt_s(col(part, "restore")) if "restore" in lineage[0][part] else "-"
        print(f"| {name} | {fmt_s(col(part, 'checkpoint'))} | {col(part, 'frozen')['median']:.2f} s | "
              f"{fmt_s(col(part, 'after_criu'))} | {col(part, 'stored')['median'] / MiB:.0f} MiB | {chunks} | {restore} |")
    after_ratio = col("second", "after_criu")["median"] / col("full", "after_criu")["median"]
    direct_b = col("second_direct", "stored")["median"] / full_b["median"]
    direct_t = col("second_direct", "checkpoint")["median"] / full_t["median"]

    def verdict(ratio, limit):
        return "met" if ratio <= limit else "not met"

    print(f"\nTargets: the second stores {bytes_ratio:.3f} of the full checkpoint's bytes (<= 0.15: "
          f"{verdict(bytes_ratio, 0.15)}) and takes {time_ratio:.2f} of its time (<= 0.5: "
          f"{verdict(time_ratio, 0.5)}); after CRIU, {after_ratio:.2f} of the full one's. Direct: "
          f"{direct_b:.3f} of the bytes ({verdict(direct_b, 0.15)}), {direct_t:.2f} of the time "
          f"({verdict(direct_t, 0.5)}).\n")
    print(f"Preemption checkpoint (the job killed once committed) against a {args.grace:.0f} s grace time, one run "
          f"per size, in increasing size; *after a policy checkpoint*: dedup, a policy checkpoint {args.policy_gap:.0f} s earlier and a "
          "tenth of the memory changed since.\n")
    print("| job | no policy checkpoint (dedup 0) | frozen | after a policy checkpoint (dedup) | frozen "
          "| after a policy checkpoint (dedup, direct) | frozen |")
    print("|---|---|---|---|---|---|---|")
    for mib, *rows in grace:
        print(f"| {mib} MiB | " + " | ".join(f"{r['checkpoint']:.2f} s | {r['frozen']:.2f} s" for r in rows) + " |")

    def largest(i):
        fits = [g[0] for g in grace if g[i]["checkpoint"] <= args.grace]
        return f"{max(fits)} MiB" if fits else f"none of those tried ({args.sizes} MiB)"

    print(f"\nLargest job tried that fits {args.grace:.0f} s: {largest(1)} without a policy checkpoint, {largest(2)} "
          f"after one (dedup), {largest(3)} after one (dedup, direct).")

if __name__ == "__main__":
    main()
