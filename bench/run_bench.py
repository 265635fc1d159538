#!/usr/bin/python3
"""Checkpoint/restore benchmark: this machine's limits, the pipeline a user would script by hand
(criu dump + tar | gzip/zstd/lz4), and cedana's dump/restore, side by side in one run.

Usage (as root, after scripts/setup.sh):  sudo bench/run_bench.py [--runs 3] [--big] [--no-s3]
Writes bench/results.json, BENCHMARKS.md and bench/throughput.png.

Every figure is a median of --runs runs (min and max kept). Absolute times swing between runs
and machines on these VMs (first touch of fresh memory is slow), so the report gives ratios
measured in the same run: against the limits and against the hand-made baseline.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CEDANA = os.environ.get("CEDANA", os.path.join(ROOT, "build/src/cli/cedana"))
CRIU = shutil.which("criu") or "/usr/local/bin/criu"
# CRIU's no-breakpoint fallback, as the daemon runs it where hardware breakpoints do not work
# (docs/architecture.md, "the breakpoint fallback").
CRIU_ENV = dict(os.environ, CRIU_FAULT="130")
# checkpoint.memory_limit_mib's default: the bench leaves it, the Targets table checks against it.
MEMORY_LIMIT_MIB = 256
# checkpoint.lz4_acceleration of the "lz4-accel-N" rows (the default is 1).
LZ4_ACCELERATION = 4
GiB = 1 << 30


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=True, capture_output=True, text=True, **kw)


def timed(fn):
    t = time.monotonic()
    out = fn()
    return time.monotonic() - t, out


def busy_cpu_s():
    """CPU seconds this machine has spent busy (every core, idle and I/O wait left out)."""
    ticks = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def timed_cpu(fn):
    """(wall s, busy CPU s of the whole machine meanwhile, fn's result). On N cores no step can
    take less than its CPU seconds / N. They swing with this VM too (the guest's time getting
    fresh memory is CPU time), so compare them within a pair or a row."""
    c = busy_cpu_s()
    t, out = timed(fn)
    return t, busy_cpu_s() - c, out


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def drop_caches():
    subprocess.run("sync; echo 3 > /proc/sys/vm/drop_caches", shell=True, check=False)


class Workload:
    """memfill started directly (for the baseline) or under cedana run (for ours)."""

    def __init__(self, memfill, mib, kind, children):
        self.memfill, self.mib, self.kind, self.children = memfill, mib, kind, children

    @property
    def name(self):
        tree = f", {self.children + 1} processes" if self.children else ""
        return f"{self.mib} MiB {self.kind}{tree}"

    def argv(self):
        return [self.memfill, str(self.mib), self.kind, str(self.children)]


def wait_for_output(path, pattern, timeout=300):
    """The first match of regex `pattern` in the file at `path`, once it is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(pattern, open(path).read()) if os.path.exists(path) else None
        if m:
            return m
        time.sleep(0.05)
    raise RuntimeError(f"{path} did not say {pattern!r} within {timeout} s")


def wait_ready(path, timeout=300):
    wait_for_output(path, "ready", timeout)


def prepare(prefix):
    """What every benchmark needs first: root, restored trees reaped by us, a scratch home in
    /var/tmp and memfill built there. Returns (home, memfill)."""
    if os.geteuid() != 0:
        sys.exit("bench: run as root (CRIU)")
    ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: detached restores come back to us
    home = tempfile.mkdtemp(prefix=prefix, dir="/var/tmp")
    memfill = os.path.join(home, "memfill")
    run(["cc", "-O2", "-o", memfill, os.path.join(ROOT, "bench/workloads/memfill.c"), "-lm"])
    return home, memfill


def descendants(pid):
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
                parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def kill_tree_of(pid):
    """Kills a process tree this script started (by pid) and reaps it: we are the subreaper,
    so a restored tree's processes come back to us, and their pids must be free for the next
    restore of the same images."""
    pids = [pid] + descendants(pid)
    for p in pids:
        try:
            os.kill(p, 9)
        except ProcessLookupError:
            pass
    wait_gone(pids)


def wait_gone(pids):
    """Reaps until none of pids exists (zombies keep their pid, and a restore needs it free)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.02)


def reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- limits ------------------------------------------------------------------------------------

def limits(ckdir):
    src, dst = bytearray(GiB), bytearray(GiB)
    src[::4096] = b"x" * (GiB // 4096)  # touch both first: first touch of fresh memory is slow
    dst[::4096] = b"y" * (GiB // 4096)  # here (PLATFORM.md) and would be measured instead
    t, _ = timed(lambda: dst.__setitem__(slice(None), src))
    memcpy = GiB / t / 1e9
    del src, dst
    path = os.path.join(ckdir, "limits.bin")
    t, _ = timed(lambda: run(f"dd if=/dev/zero of={path} bs=4M count=256 conv=fdatasync status=none"))
    write = GiB / t / 1e9
    drop_caches()
    t, _ = timed(lambda: run(f"dd if={path} of=/dev/null bs=4M status=none"))
    read = GiB / t / 1e9
    os.unlink(path)
    return {"memcpy_gbs": memcpy, "disk_write_gbs": write, "disk_read_gbs": read}


# --- baseline: criu dump + tar | compressor, by hand --------------------------------------------

BASELINE_CODECS = {"gzip": ("gzip -1", "gzip -dc", "gz"), "zstd": ("zstd -1 -T0 -q", "zstd -dcq", "zst"),
                   "lz4": ("lz4 -1 -q", "lz4 -dcq", "lz4")}


def plain_dump(w, work, name):
    """Starts the workload, `criu dump`s it into `work`/`name` and waits until it is gone.
    Returns (images dir, CRIU's time, its CPU seconds)."""
    out = os.path.join(work, name + ".out")
    proc = subprocess.Popen(w.argv(), stdin=subprocess.DEVNULL, stdout=open(out, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    wait_ready(out)
    img = os.path.join(work, name)
    os.makedirs(img)
    tree = [proc.pid] + descendants(proc.pid)
    dump_t, dump_cpu, _ = timed_cpu(lambda: run([CRIU, "dump", "-t", str(proc.pid), "-D", img, "--shell-job",
                                                 "-o", "dump.log"], env=CRIU_ENV))
    proc.wait()
    wait_gone(tree)
    return img, dump_t, dump_cpu


def plain_restore_timed(img):
    """A plain `criu restore` of `img`, caches dropped first: (its time, its CPU seconds)."""
    drop_caches()
    t, cpu, pid = timed_cpu(lambda: criu_restore(img))
    kill_tree_of(pid)
    os.unlink(os.path.join(img, "restored.pid"))
    return t, cpu


def baseline_once(w, work, ckdir):
    img, dump_t, dump_cpu = plain_dump(w, work, "img")
    sync_t, sync_cpu, _ = timed_cpu(lambda: run(["sync", "-f", os.path.join(img, "inventory.img")]))
    r = {"frozen": dump_t, "dump_fsync": dump_t + sync_t, "dump_fsync_cpu": dump_cpu + sync_cpu}
    for codec, (comp, decomp, ext) in BASELINE_CODECS.items():
        target = os.path.join(ckdir, f"baseline.tar.{ext}")
        t, _ = timed(lambda: run(f"tar -cf - -C {img} . | {comp} > {target} && sync -f {target}"))
        r[f"checkpoint_{codec}"] = dump_t + sync_t + t
        r[f"size_{codec}"] = os.path.getsize(target)
        # restore: decompress and untar, then criu restore
        img2 = os.path.join(work, "img2")
        os.makedirs(img2)
        drop_caches()
        t_un, _ = timed(lambda: run(f"{decomp} {target} | tar -xf - -C {img2}"))
        t_rs, pid = timed(lambda: criu_restore(img2))
        kill_tree_of(pid)
        r[f"restore_{codec}"] = t_un + t_rs
        shutil.rmtree(img2)
        os.unlink(target)
    r["restore_plain"], r["restore_plain_cpu"] = plain_restore_timed(img)
    r["image_bytes"] = sum(os.path.getsize(os.path.join(img, f)) for f in os.listdir(img))
    shutil.rmtree(img)
    return r


def criu_restore(img):
    pidfile = os.path.join(img, "restored.pid")
    r = subprocess.run([CRIU, "restore", "-D", img, "-d", "--shell-job", "--pidfile", pidfile, "-o", "restore.log"],
                       env=CRIU_ENV, capture_output=True, text=True)
    if r.returncode != 0:
        errors = [l for l in open(os.path.join(img, "restore.log")) if "Error" in l and "RLIMIT" not in l]
        raise RuntimeError(f"criu restore of {img} failed: {''.join(errors[-3:])}")
    return int(open(pidfile).read())


# --- ours: cedana dump / restore ------------------------------------------------------------------

class Daemon:
    def __init__(self, home, env_extra):
        self.home = home
        self.env = dict(os.environ, CEDANA_CONFIG=f"{home}/config.json", CEDANA_DAEMON_SOCKET=f"{home}/cedana.sock",
                        CEDANA_DAEMON_STATE_DIR=f"{home}/state", CEDANA_CHECKPOINT_DIR=f"{home}/checkpoints",
                        CEDANA_CHECKPOINT_WORK_DIR=f"{home}/work", CEDANA_DAEMON_LOG_FILE=f"{home}/daemon.log",
                        CEDANA_CLUSTER_KEY_FILE=f"{home}/cluster.key", CEDANA_CHECKPOINT_KEEP="0",
                        CEDANA_CRIU_TIMEOUT_SECONDS="600")
        self.env.update(env_extra)  # may replace the defaults above
        self.proc = subprocess.Popen([CEDANA, "daemon", "start"], env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run([CEDANA, "daemon", "status"], env=self.env, capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("the cedana daemon did not start")

    def cli(self, *args):
        r = subprocess.run([CEDANA, *args], env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cedana {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
        return r.stdout.strip()

    def checkpoints(self, *dir_args):
        """The listing's rows (`cedana checkpoints --json`)."""
        listing = json.loads(self.cli("checkpoints", "--json", *dir_args))
        return listing.get("checkpoints", listing) if isinstance(listing, dict) else listing

    def last_dump_timing(self):
        """(frozen s, total s, peak image data a direct dump buffered in MiB, else 0)"""
        lines = [l for l in open(f"{self.home}/daemon.log") if " dump: checkpoint " in l]
        m = re.search(r"dump (\d+) ms, total (\d+) ms", lines[-1])
        peak = re.search(r"peak buffer (\d+) MiB", lines[-1])
        return int(m.group(1)) / 1000, int(m.group(2)) / 1000, int(peak.group(1)) if peak else 0

    def restore_kind(self, checkpoint):
        """How the daemon restored `checkpoint`, from its log: "direct", "direct, pages read in
        place", "unpacked first", or "direct failed, unpacked first". A restore that could not go
        direct (a work dir too long for CRIU's socket) looks like a slow direct one otherwise."""
        lines = [l for l in open(f"{self.home}/daemon.log") if checkpoint in l]
        done = [l for l in lines if f" restore: checkpoint {checkpoint} restored as workload " in l]
        if not done:
            raise RuntimeError(f"the daemon logged no restore of {checkpoint}")
        if "direct, heads" in done[-1]:
            return "direct, pages read in place" if " read in place" in done[-1] else "direct"
        if any(f"direct restore of {checkpoint} failed" in l for l in lines):
            return "direct failed, unpacked first"
        return "unpacked first"

    def reset_peak_rss(self):
        with open(f"/proc/{self.proc.pid}/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS

    def peak_rss_mib(self):
        """The daemon's peak resident memory since reset_peak_rss, in MiB."""
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0

    def wait_work_dir_empty(self):
        """The daemon removes a dump's or restore's images dir just after its reply: a
        measurement that follows waits for that, so that it does not pay for it."""
        work = os.path.join(self.home, "work")
        for _ in range(300):
            if not os.path.isdir(work) or not os.listdir(work):
                return
            time.sleep(0.01)
        raise RuntimeError(f"{work} still holds {os.listdir(work)}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def paired_images(w, work):
    """A plain `criu dump` of the workload kept for the whole workload's rows: each of our
    restores is paired with a plain restore of it, right before or after (ours_once), so that a
    restore ratio compares two restores a few seconds apart. This VM's restores swing by 2-3x
    over minutes (how fast it hands out memory), more than any difference measured."""
    return plain_dump(w, work, "paired-img")[0]


def ours_once(d, w, codec, streams, ck_dir, paired_img=None, plain_first=False):
    out = os.path.join(d.home, "w.out")
    if os.path.exists(out):
        os.unlink(out)
    wid = d.cli("run", "--label", "bench", "--output", out, "--", *w.argv())
    wait_ready(out)
    args = ["dump", wid, "--compression", codec, "--streams", str(streams), "--leave-running"]
    if ck_dir:
        args += ["--dir", ck_dir]
    d.reset_peak_rss()
    _, dump_cpu, ck = timed_cpu(lambda: d.cli(*args))
    dump_rss = d.peak_rss_mib()
    frozen, total, peak_mib = d.last_dump_timing()
    d.cli("kill", wid)
    d.wait_work_dir_empty()
    plain = plain_restore_timed(paired_img) if paired_img and plain_first else None
    drop_caches()
    rargs = ["restore", ck] + (["--dir", ck_dir] if ck_dir else [])
    d.reset_peak_rss()
    t_rs, restore_cpu, rid = timed_cpu(lambda: d.cli(*rargs))
    restore_rss = d.peak_rss_mib()
    restore_kind = d.restore_kind(ck)
    d.cli("kill", rid)
    d.wait_work_dir_empty()
    if paired_img and not plain_first:
        plain = plain_restore_timed(paired_img)
    rows = d.checkpoints(*(["--dir", ck_dir] if ck_dir else []))
    size = next((c.get("stored_bytes", 0) for c in rows if c.get("id") == ck), 0)
    d.cli("checkpoints", "delete", ck, *(["--dir", ck_dir] if ck_dir else []))
    r = {"frozen": frozen, "checkpoint": total, "restore": t_rs, "size": size, "peak_mib": peak_mib,
         "daemon_rss_dump_mib": dump_rss, "daemon_rss_restore_mib": restore_rss,
         "checkpoint_cpu": dump_cpu, "restore_cpu": restore_cpu, "restore_kind": restore_kind}
    if plain is not None:
        r["restore_plain_paired"], r["restore_plain_paired_cpu"] = plain
        # Per pair: both restores of a pair met the same VM, so the median of these ratios
        # moves less with it than the ratio of two medians.
        r["restore_paired_ratio"] = t_rs / plain[0]
    return r


def restore_ratio(o, b):
    """Our restore against a plain `criu restore`: the median of each run's ratio to its paired
    plain restore (rows measured from 2026-12-06 12:00 UTC on), else the ratio of the medians
    of ours and of the paired restores (from 2026-12-06 on), else of ours and the workload's
    baseline."""
    if "restore_paired_ratio" in o:
        return o["restore_paired_ratio"]["median"]
    plain = o.get("restore_plain_paired", b["restore_plain"])
    return o["restore"]["median"] / plain["median"]


# --- report ------------------------------------------------------------------------------------

# BENCHMARKS.md from this line on is other benchmarks' and kept as it is.
OTHER_BENCHMARKS = "<!-- Written by other benchmarks (each section names its command); bench/run_bench.py keeps them. -->"


def fmt_s(st):
    return f"{st['median']:.2f} s ({st['min']:.2f}-{st['max']:.2f})"


def cpu_cells(o):
    """Busy CPU seconds of the machine: our checkpoint / our restore (the paired plain restore),
    medians (rows measured before the column have none)."""
    if "restore_cpu" not in o:
        return "-"
    paired = f" ({o['restore_plain_paired_cpu']['median']:.2f})" if "restore_plain_paired_cpu" in o else ""
    return f"{o['checkpoint_cpu']['median']:.2f} / {o['restore_cpu']['median']:.2f}{paired}"


def daemon_rss(o):
    """The node daemon's peak RSS in a dump and in a restore, max of the runs (rows measured
    before the column have none)."""
    if "daemon_rss_dump_mib" not in o:
        return "-"
    return f"{o['daemon_rss_dump_mib']['max']:.0f} / {o['daemon_rss_restore_mib']['max']:.0f} MiB"


def targets_section(results):
    """The performance targets, each checked on every workload: the best of our rows against the
    baseline measured in the same run, once for the default dump and once for deduplicated
    direct dumps (where a workload has such rows)."""
    lines = ["## Targets", "",
             "Best row of each workload against the baseline of the same run (met: yes/no). *default*: "
             "the local rows (`checkpoint.direct` 0, no dedup); *dedup-direct*: `checkpoint.dedup` and "
             "`checkpoint.direct`, a label's first checkpoint (every chunk stored).", "",
             "| workload | zstd/lz4 checkpoint / criu dump+fsync (<= 1.25; doubles <= 1.3) | "
             "criu+tar\\|gzip / our gzip checkpoint (>= 3) | "
             "zstd/lz4 restore / criu restore (<= 1.15) | frozen / criu dump (<= 1.10) | "
             f"daemon peak RSS (<= {MEMORY_LIMIT_MIB} MiB, checkpoint.memory_limit_mib) |",
             "|---|---|---|---|---|---|"]
    for prefix, mode in (("local ", "default"), ("dedup-direct ", "dedup-direct"),
                         (f"lz4-accel-{LZ4_ACCELERATION} ", f"checkpoint.lz4_acceleration {LZ4_ACCELERATION}")):
        for w in results["workloads"]:
            if any(k.startswith(prefix) for k in w["ours"]):
                lines.append(target_row(w, prefix, f"{w['name']} ({mode})"))
    return lines + ["", "The targets of deduplicated checkpoints (the second of a lineage stores <= 0.15 of a full "
                    "one's bytes in <= 0.5 of its time) are checked in *Deduplicated periodic checkpoints* below "
                    "(bench/dedup_bench.py).", ""]


def target_row(w, prefix, name):
    """One line of the Targets table: workload `w`'s rows whose key starts with `prefix`."""
    def median(o, key):
        return o[key]["median"]

    b = w["baseline"]
    mine = [(k, o) for k, o in w["ours"].items() if k.startswith(prefix)]
    fast = [(k, o) for k, o in mine if k.split(" ")[1] in ("zstd", "lz4")]
    gz = [(k, o) for k, o in mine if k.split(" ")[1] == "gzip"]
    def restore_cpu(o):
        """How much work the restore did against the paired plain one (rows measured before
        the CPU column have none)."""
        if "restore_plain_paired_cpu" not in o:
            return ""
        return f"; CPU {median(o, 'restore_cpu'):.2f} s against {median(o, 'restore_plain_paired_cpu'):.2f} s"

    # (rows, min or max: the row whose ratio is best, or worst for "frozen", the row's ratio,
    # target met, label, what the cell adds). Restores are picked by ratio, not by time: each
    # row's restores are paired with plain ones, whose times swing with the VM from row to row.
    # Memory that does not compress is stored raw: its target is that of an uncompressed copy.
    checkpoint_target = 1.3 if w["kind"] == "doubles" else 1.25
    checks = [
        (fast, min, lambda o: median(o, "checkpoint") / median(b, "dump_fsync"),
         lambda r: r <= checkpoint_target, "", lambda o: ""),
        (gz, max, lambda o: median(b, "checkpoint_gzip") / median(o, "checkpoint"),
         lambda r: r >= 3, "", lambda o: ""),
        (fast, min, lambda o: restore_ratio(o, b), lambda r: r <= 1.15, "", restore_cpu),
        (mine, max, lambda o: median(o, "frozen") / median(b, "frozen"),
         lambda r: r <= 1.10, "worst: ", lambda o: ""),
    ]
    cells = []
    for rows, pick, ratio, met, label, more in checks:
        if not rows:
            cells.append("-")
            continue
        k, o = pick(rows, key=lambda kv: ratio(kv[1]))
        r = ratio(o)
        cells.append(f"{r:.2f} ({label}{k}, {'yes' if met(r) else 'no'}{more(o)})")
    # The pipeline's memory is bounded by the limit whatever the workload's size: the worst
    # row, dump or restore (rows measured before the column have none).
    rss = [(max(o["daemon_rss_dump_mib"]["max"], o["daemon_rss_restore_mib"]["max"]), k)
           for k, o in mine if "daemon_rss_dump_mib" in o]
    if rss:
        peak, k = max(rss)
        cells.append(f"{peak:.0f} MiB (worst: {k}, {'yes' if peak <= MEMORY_LIMIT_MIB else 'no'})")
    else:
        cells.append("-")
    return f"| {name} | " + " | ".join(cells) + " |"


def restore_kinds(w):
    """"kind: rows; ..." for the rows that recorded how their restores ran (measured from
    2026-12-07 11:50 UTC on); a row whose runs differed is listed under each kind."""
    rows = {}
    for key, o in w["ours"].items():
        for kind in o.get("restore_kind", []):
            rows.setdefault(kind, []).append(key)
    return "; ".join(f"{kind}: {', '.join(keys)}" for kind, keys in sorted(rows.items()))


def report(results, path_md, path_png):
    L = results["limits"]
    lines = ["# Benchmarks", "",
             f"Measured {results['when']} on this machine ({results['machine']}), one run of "
             "`sudo bench/run_bench.py`; medians of "
             f"{results['runs']} runs with min-max. Ratios compare figures of the same run.", ""]
    later = [f"{w['name']} ({w['when']}, medians of {w.get('runs', results['runs'])} runs)"
             for w in results["workloads"] if w.get("when", results["when"]) != results["when"]]
    if later:
        lines += ["Measured again later with `--only` (the binaries of that time; ratios still compare "
                  "figures of one run): " + ", ".join(later) + ". The limits come from the first run.", ""]
    lines += [
             "## Limits", "",
             f"- memory copy (warm memory): {L['memcpy_gbs']:.2f} GB/s",
             f"- checkpoint dir sequential write with fdatasync: {L['disk_write_gbs']:.2f} GB/s",
             f"- checkpoint dir cold sequential read: {L['disk_read_gbs']:.2f} GB/s", ""]
    for w in results["workloads"]:
        b, gib = w["baseline"], w["mib"] / 1024
        lines += [f"## {w['name']}", "",
                  f"Baseline by hand: `criu dump` {fmt_s(b['frozen'])} (+fsync {b['dump_fsync']['median']:.2f} s), "
                  f"`criu restore` {fmt_s(b['restore_plain'])}, images {b['image_bytes']['median'] / GiB:.2f} GiB"
                  + (f"; CPU s: `criu dump`+fsync {b['dump_fsync_cpu']['median']:.2f}, `criu restore` "
                     f"{b['restore_plain_cpu']['median']:.2f}" if "dump_fsync_cpu" in b else "") + ".", "",
                  "| | checkpoint | frozen | restore | size | GB/s (ckpt) | ckpt / criu dump+fsync | "
                  "ckpt / criu+tar\\|codec | restore / criu restore | CPU s: ckpt / restore (paired criu restore) | "
                  "daemon peak RSS (dump / restore) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for codec in BASELINE_CODECS:
            lines.append(f"| criu + tar \\| {BASELINE_CODECS[codec][0]} | {fmt_s(b['checkpoint_' + codec])} | "
                         f"{b['frozen']['median']:.2f} s | {fmt_s(b['restore_' + codec])} | "
                         f"{b['size_' + codec]['median'] / GiB:.2f} GiB | "
                         f"{gib * 1.0737 / b['checkpoint_' + codec]['median']:.2f} | "
                         f"{b['checkpoint_' + codec]['median'] / b['dump_fsync']['median']:.2f} | 1.00 | "
                         f"{b['restore_' + codec]['median'] / b['restore_plain']['median']:.2f} | - | - |")
        for key, o in w["ours"].items():
            codec = key.split(" ")[1]
            base = b.get("checkpoint_" + codec)
            vs_base = f"{o['checkpoint']['median'] / base['median']:.2f}" if base else "-"
            lines.append(f"| {key} | {fmt_s(o['checkpoint'])} | {o['frozen']['median']:.2f} s | {fmt_s(o['restore'])} | "
                         f"{o['size']['median'] / GiB:.2f} GiB | {gib * 1.0737 / o['checkpoint']['median']:.2f} | "
                         f"{o['checkpoint']['median'] / b['dump_fsync']['median']:.2f} | {vs_base} | "
                         f"{restore_ratio(o, b):.2f} | {cpu_cells(o)} | {daemon_rss(o)} |")
        peaks = [f"{key} {o['peak_mib']['max']:.0f}" for key, o in w["ours"].items()
                 if o.get("peak_mib", {}).get("max")]
        if peaks:
            lines += ["", "Peak image data buffered (MiB, max of the runs; "
                      f"checkpoint.memory_limit_mib {MEMORY_LIMIT_MIB}): " + ", ".join(peaks) + "."]
        kinds = restore_kinds(w)
        if kinds:
            lines += ["", "How the restores ran (the daemon's log): " + kinds + "."]
        lines.append("")
    lines += targets_section(results)
    lines += ["## Plot", "", f"![checkpoint throughput against memory size]({os.path.relpath(path_png, ROOT)})", "",
              "## How to read it", "",
              "- *checkpoint*: from the request to a committed checkpoint (ours: `cedana dump --leave-running`, "
              "manifest written and fsynced); baseline: `criu dump` + fsync, then `tar | codec` into the "
              "checkpoint dir + fsync.",
              "- *local*/*s3* rows are the default dump (`checkpoint.direct` 0): CRIU writes an images dir "
              "in `checkpoint.work_dir`, which is then compressed into the streams and stored. *direct* "
              "rows are `checkpoint.direct` 1: CRIU's image files go straight into the streams through "
              "CRIU's image streamer, and CRIU waits when the memory limit is reached. *s3 zstd x16* "
              "(from 2026-12-06 19:00 UTC on): more streams than the S3 part budget, half of "
              "`checkpoint.memory_limit_mib` (eight 16 MiB parts), has parts for; streams wait for a "
              "part instead of taking more memory.",
              "- *frozen*: how long the workload is stopped (ours: how long CRIU ran in a leave-running dump; "
              "a direct dump's CRIU also waits for compression and storage when the memory limit is reached).",
              "- *restore*: from the request until the processes run again (ours: verify, decompress, "
              "`criu restore`; baseline: decompress + untar, then `criu restore`), caches dropped first. "
              "Workloads measured from 2026-12-01 on are restored directly where they can be (checkpoints of the "
              "default dump, at most as many processes as cores): CRIU starts once the streams' heads are "
              "verified and reads the pages while they are unpacked (docs/architecture.md). From 2026-12-06 on, "
              "the pages of streams stored uncompressed go to CRIU from the stored file itself, not through a "
              "copy in the images dir, and the restore's workload record no longer waits for an fsync. From "
              "2026-12-07 16:00 UTC on, what CRIU has read of compressed pages is released from the images dir "
              "as it goes (before, above the kernel's dirty limit, the kernel wrote that copy back to disk).",
              f"- *lz4-accel-{LZ4_ACCELERATION}* rows (measured from 2026-12-07 on) are the default dump with "
              f"`checkpoint.lz4_acceleration` {LZ4_ACCELERATION}: lz4's fast mode, faster and storing more. "
              "The Targets table checks them apart from the default rows.",
              "- *dedup-direct* rows (measured from 2026-12-05 on) are `checkpoint.dedup` and `checkpoint.direct` "
              "together: the pages are cut into content-addressed chunks as CRIU hands them over, each compressed "
              "and stored as its own object, the other images go into the streams. Each is its label's first "
              "checkpoint, so every chunk is stored; the restore serves CRIU the pages from the chunks. Until "
              "2026-12-07 09:40 UTC these restores unpacked every chunk into the images dir first, never "
              "directly: the bench's work dir for them was too long for CRIU's socket in a restore dir named "
              "after the checkpoint (the daemon logged it; restore dirs are no longer named so). From then on "
              "CRIU reads pages whose chunks are all stored raw (random, doubles) in place, from the chunk "
              "files, and gets the others through a pipe. Workloads measured from 2026-12-07 11:50 UTC on say "
              "under their table how each row's restores ran, from the daemon's log: directly (pages read in "
              "place or not) or unpacked first (a deduplicated tree of more processes than cores, or a direct "
              "restore that could not start). From 2026-12-07 12:50 UTC on, trees restore directly from "
              "their streams; before, every tree of more processes than cores was unpacked first.",
              "- *restore / criu restore*: from 2026-12-06 on, each of our restores is paired with a plain "
              "`criu restore` of a dump of the same workload, run right before or after it (alternately), caches "
              "dropped before each, and the row's ratio is of the two medians: this VM's restore times swing "
              "2-3x within minutes. Rows measured from 2026-12-06 12:00 UTC on (those with CPU figures) give "
              "the median of each pair's ratio instead, which moves less with the VM. Earlier rows compare "
              "with the baseline's restore above the table. The Targets table picks the restore row with the "
              "best ratio (until 2026-12-06 it picked the row with the fastest restore).",
              "- *CPU s*: busy CPU seconds of the whole machine (`/proc/stat`, all cores, I/O wait left out) "
              "while our checkpoint (the CLI's request), our restore and its paired plain `criu restore` ran; "
              "medians. On N cores nothing finishes in less than its CPU seconds / N. They swing with this VM "
              "too (the guest's time getting fresh memory is CPU time: the same restore took 2.2 and 5.0 CPU s "
              "within minutes), so compare them within a row, with the paired restore. A plain restore "
              "of one process keeps one core busy; ours verifies and unpacks on the other, so a restore that "
              "needs more than 2.3x the plain one's CPU seconds (2 x 1.15) here cannot finish within 1.15x its time, "
              "however it is overlapped.",
              "- GB/s is resident memory checkpointed per second.", ""]
    # Sections other benchmarks wrote (bench/slurm_detection_bench.sh, bench/mpi_bench.py) stay.
    kept = ""
    if os.path.exists(path_md):
        text = open(path_md).read()
        if OTHER_BENCHMARKS in text:
            kept = text[text.index(OTHER_BENCHMARKS):]
    with open(path_md, "w") as f:
        f.write("\n".join(lines) + ("\n" + kept if kept else ""))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot (apt-get install python3-matplotlib)")
        return
    series = {}
    for w in results["workloads"]:
        if w["kind"] != "typical" or w["children"]:
            continue
        gib = w["mib"] / 1024
        b = w["baseline"]
        series.setdefault("criu + tar | zstd -1", []).append((gib, gib * 1.0737 / b["checkpoint_zstd"]["median"]))
        series.setdefault("criu dump + fsync (no compression)", []).append((gib, gib * 1.0737 / b["dump_fsync"]["median"]))
        for key, o in w["ours"].items():
            if key.startswith("local"):
                series.setdefault("cedana " + key, []).append((gib, gib * 1.0737 / o["checkpoint"]["median"]))
    plt.figure(figsize=(8, 5))
    for name, pts in sorted(series.items()):
        pts.sort()
        plt.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    plt.xlabel("resident memory (GiB, typical 3:1 data)")
    plt.ylabel("checkpoint throughput (GB/s)")
    plt.title("Checkpoint throughput against memory size")
    plt.grid(alpha=0.3)
    plt.legend(fontsize=7)
    plt.tight_layout()
    plt.savefig(path_png, dpi=110)


def merged(previous, results):
    """`results` with the workloads of `previous` (the run a --only run adds to) that it did not
    measure again, in their places, and that run's limits, time and run count; `results` when
    there is no previous run."""
    if previous is None:
        return results
    fresh = {w["name"]: w for w in results["workloads"]}
    return dict(results, workloads=[fresh.pop(w["name"], w) for w in previous["workloads"]] + list(fresh.values()),
                limits=previous["limits"], when=previous["when"], runs=previous["runs"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also the 4 GiB workloads")
    ap.add_argument("--no-s3", action="store_true", help="skip the loopback S3 server")
    ap.add_argument("--only", help="run only the workload of this name (else those whose name contains "
                                   "it), and merge them into the existing bench/results.json")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 64 MiB workloads, one run, no S3 (figures not representative)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.no_s3 = 1, True
    home, memfill = prepare("cedana-bench.")
    ckdir = os.path.join(home, "ck")
    os.makedirs(ckdir)
    workloads = [Workload(memfill, 256, "typical", 0), Workload(memfill, 1024, "typical", 0),
                 Workload(memfill, 1024, "random", 0), Workload(memfill, 1024, "doubles", 0),
                 Workload(memfill, 1024, "typical", 7)]
    if args.quick:
        workloads = [Workload(memfill, 32, "typical", 0), Workload(memfill, 64, "typical", 0),
                     Workload(memfill, 64, "typical", 7)]
    if args.big:
        workloads += [Workload(memfill, 4096, "typical", 0), Workload(memfill, 4096, "random", 0)]
    if args.only:  # "1024 MiB typical" is also part of the tree's name
        exact = [w for w in workloads if w.name == args.only]
        workloads = exact or [w for w in workloads if args.only in w.name]
    rgw_dir = None
    env_extra = {}
    if not args.no_s3:
        rgw_dir = os.path.join(home, "rgw")
        os.makedirs(rgw_dir)
        run(f"source {ROOT}/tests/s3/rgw.sh && rgw_start {rgw_dir} 9980 && s3_make_bucket bench", executable="/bin/bash")
        env_extra = {"AWS_ACCESS_KEY_ID": "CEDANAKEY", "AWS_SECRET_ACCESS_KEY": "CEDANASECRET",
                     "AWS_ENDPOINT_URL": "http://127.0.0.1:9980", "AWS_REGION": "us-east-1"}
    results = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": args.runs,
               "machine": f"{os.cpu_count()} cores, {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') // GiB} GiB, "
                          f"kernel {os.uname().release}"}
    results_path = os.path.join(ROOT, "bench/results.json")
    previous = json.load(open(results_path)) if args.only else None
    # The default dump (checkpoint.direct=0) gives the "local"/"s3" rows; a second daemon
    # makes direct dumps (checkpoint.direct=1) for the "direct" rows.
    d = Daemon(home, dict(env_extra, CEDANA_CHECKPOINT_DIRECT="0"))
    home_direct = os.path.join(home, "direct")
    os.makedirs(home_direct)
    d_direct = Daemon(home_direct, dict(env_extra, CEDANA_CHECKPOINT_DIRECT="1"))
    # A third makes deduplicated direct dumps (checkpoint.dedup=1, checkpoint.direct=1) for the
    # "dedup-direct" rows: each run's checkpoint is its label's first (the last run's was deleted
    # with its chunks), so every chunk is stored, and the restore reads them back.
    home_dedup = os.path.join(home, "dedup-direct")
    os.makedirs(home_dedup)
    d_dedup = Daemon(home_dedup, dict(env_extra, CEDANA_CHECKPOINT_DIRECT="1", CEDANA_CHECKPOINT_DEDUP="1"))
    # A fourth compresses with lz4's fast mode (checkpoint.lz4_acceleration) for the
    # "lz4-accel-4" rows: what the setting trades, time against stored bytes.
    home_accel = os.path.join(home, "lz4-accel")
    os.makedirs(home_accel)
    d_accel = Daemon(home_accel, dict(env_extra, CEDANA_CHECKPOINT_DIRECT="0",
                                      CEDANA_CHECKPOINT_LZ4_ACCELERATION=str(LZ4_ACCELERATION)))
    try:
        log("limits")
        results["limits"] = limits(ckdir)
        results["workloads"] = []
        for w in workloads:
            log(f"{w.name}: baseline")
            base = []
            for _ in range(args.runs):
                work = tempfile.mkdtemp(dir=home)
                base.append(baseline_once(w, work, ckdir))
                shutil.rmtree(work)
                reap_all()
            entry = {"name": w.name, "when": results["when"], "runs": args.runs, "mib": w.mib, "kind": w.kind, "children": w.children,
                     "baseline": {k: stats([r[k] for r in base]) for k in base[0]}, "ours": {}}
            # Every codec with 1, 2 and 4 streams on the 1 GiB typical workload; 1 and 4 on the
            # others (the run stays under half an hour); 4 on the 4 GiB ones (--big: each of
            # their runs takes a minute); the tree with zstd (the default codec) and lz4 x4.
            all_streams = (1, 2, 4) if (w.mib == 1024 and w.kind == "typical") else (1, 4)
            if w.mib > 1024:
                all_streams = (4,)
            configs = [(c, s) for c in ("none", "lz4", "zstd", "gzip") for s in all_streams]
            if w.children:
                configs = [("zstd", 1), ("zstd", 4), ("lz4", 4)]
            paired_img = paired_images(w, tempfile.mkdtemp(dir=home))

            def measure(key, daemon, codec, streams, ck):
                """One row: --runs checkpoints and restores, each restore paired (plain first
                every other run)."""
                log(f"{w.name}: {key}")
                runs = [ours_once(daemon, w, codec, streams, ck, paired_img, i % 2 == 1) for i in range(args.runs)]
                reap_all()
                entry["ours"][key] = {k: stats([r[k] for r in runs]) for k in runs[0] if k != "restore_kind"}
                entry["ours"][key]["restore_kind"] = sorted({r["restore_kind"] for r in runs})

            targets = [("local", None)]
            if rgw_dir and w.mib == 1024 and w.kind == "typical" and not w.children:
                targets.append(("s3", "s3://bench/run"))
            for where, ck in targets:
                # S3 with 16 streams too: more than the part budget (half of
                # checkpoint.memory_limit_mib) has parts for, so streams share and wait.
                s3_configs = [("zstd", 1), ("zstd", 4), ("zstd", 16)]
                for codec, streams in configs if where == "local" else s3_configs:
                    measure(f"{where} {codec} x{streams}", d, codec, streams, ck)
            if w.mib == 1024 and w.kind == "typical" and not w.children:
                for codec, streams in (("none", 4), ("lz4", 4), ("zstd", 1), ("zstd", 4)):
                    measure(f"direct {codec} x{streams}", d_direct, codec, streams, None)
            if w.kind == "typical" and not w.children:
                measure(f"lz4-accel-{LZ4_ACCELERATION} lz4 x4", d_accel, "lz4", 4, None)
            for codec in ("lz4", "zstd"):
                measure(f"dedup-direct {codec} x4", d_dedup, codec, 4, None)
            results["workloads"].append(entry)
            with open(results_path, "w") as f:  # complete after each workload, whenever the run stops
                json.dump(merged(previous, results), f, indent=1)
    finally:
        d.stop()
        d_direct.stop()
        d_dedup.stop()
        d_accel.stop()
        if rgw_dir:
            subprocess.run(f"source {ROOT}/tests/s3/rgw.sh && rgw_stop {rgw_dir}", shell=True, executable="/bin/bash")
        reap_all()
        shutil.rmtree(home, ignore_errors=True)
    results = merged(previous, results)  # as written after the last workload
    report(results, os.path.join(ROOT, "BENCHMARKS.md"), os.path.join(ROOT, "bench/throughput.png"))
    log("wrote BENCHMARKS.md and bench/throughput.png")


if __name__ == "__main__":
    main()
