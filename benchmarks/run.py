"""Side-by-side benchmarks: each case runs minitorch and a hand-written numpy version of the same
forward and backward in the same process, after a warm-up, several repeats, reporting medians
and the ratio minitorch / numpy. PyTorch is added as a column when it happens to be installed.

    python -m benchmarks                 # all cases, CPU
    python -m benchmarks --case overhead views_inplace --repeats 7 --json out.json
    python -m benchmarks --device cuda   # CuPy versions
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import minitorch

from . import cases


def _median_seconds(fn, repeats: int, sync) -> float:
    fn()  # warm-up
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _torch_available():
    try:
        import torch  # noqa: F401

        return True
    except ImportError:
        return False


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", nargs="*", default=None, help=f"cases to run (default all: {', '.join(cases.CASES)})")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for every column (default 1)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)

    minitorch.set_num_threads(args.threads)
    with_torch = _torch_available() and args.device == "cpu"
    if with_torch:
        import torch

        torch.set_num_threads(args.threads)
    sync = (lambda: minitorch.cuda.synchronize()) if args.device == "cuda" else (lambda: None)

    print(f"minitorch {minitorch.__version__}, numpy {np.__version__}, device {args.device}, "
          f"BLAS threads {minitorch.get_num_threads()}, repeats {args.repeats}")
    header = f"{'case':<18}{'unit':>6}{'minitorch':>12}{'numpy':>12}{'ratio':>8}"
    if with_torch:
        header += f"{'torch':>12}"
    print(header)
    print("-" * len(header))
    results = []
    for name in args.case or list(cases.CASES):
        case = cases.CASES[name](args.device)
        mini = _median_seconds(case.minitorch, args.repeats, sync) * case.scale
        ref = _median_seconds(case.numpy, args.repeats, sync) * case.scale
        row = {"case": name, "unit": case.unit, "minitorch": mini, "numpy": ref, "ratio": mini / ref}
        line = f"{name:<18}{case.unit:>6}{mini:>12.3f}{ref:>12.3f}{mini / ref:>8.2f}"
        if with_torch and case.torch is not None:
            row["torch"] = _median_seconds(case.torch, args.repeats, sync) * case.scale
            line += f"{row['torch']:>12.3f}"
        print(line)
        results.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "threads": args.threads, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
