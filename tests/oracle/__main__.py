"""The long run: python -m tests.oracle --programs 100000 --seed 0 --jobs 2

Runs N random programs (seeds S, S+1, ...) in minitorch and PyTorch, shrinks each failure, groups the
failures by cause (op and kind of check), prints one shrunk repro per group, and exits 1 on any
disagreement.
"""

import argparse
import collections
import multiprocessing
import sys
import time
import warnings

from .runner import run_range


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.oracle", description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--dtype", choices=["float32", "float64"], default=None, help="default: both, by seed")
    ap.add_argument("--no-pending", action="store_true", help="also draw the ops listed in pending.py")
    ap.add_argument("--show", type=int, default=1, help="shrunk repros printed per failure group")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.time()
    n, jobs = a.programs, max(a.jobs, 1)
    bounds = [(a.seed + n * i // jobs, a.seed + n * (i + 1) // jobs) for i in range(jobs)]
    tasks = [(lo, hi, a.dtype, not a.no_pending) for lo, hi in bounds]
    if jobs == 1:
        results = [run_range(*tasks[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = pool.starmap(run_range, tasks)
    groups = collections.defaultdict(list)
    ran = 0
    counts = collections.Counter()
    for r in results:
        ran += r["ran"]
        counts.update(r["counts"])
        for key, items in r["failures"].items():
            groups[key] += items
    dt = time.time() - t0
    print(f"{ran} programs in {dt:.1f}s ({ran / dt:.1f} programs/s, {jobs} jobs)")
    for what, n in sorted(counts.items()):
        print(f"  {n:6d} x {what}")
    nfail = sum(len(v) for v in groups.values())
    print(f"{nfail} failing programs in {len(groups)} groups")
    for key, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        seeds = [s for s, _ in items]
        print(f"\n=== {len(items)} x {key}   (seeds {seeds[:8]}{' ...' if len(seeds) > 8 else ''})")
        for _, text in items[: a.show]:
            print(text)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
