"""Side-by-side benchmarks: each case runs minitorch and a hand-written numpy version of the same
forward and backward in the same process, several repeats taken in turns (each after a warm-up run),
reporting medians and the ratio minitorch / numpy (the median of the per-turn ratios). The ``compiled``
column runs the same step through ``minitorch.compile`` (``c/np``: its per-turn ratio to numpy; ``compile s``:
seconds spent tracing and planning). PyTorch eager mode is added as a column when it is installed
(``c/torch``: compiled / torch).

    python -m benchmarks                 # every case but the heavy ones (sparse_mm), CPU
    python -m benchmarks --all           # every case, sparse_mm included
    python -m benchmarks --case overhead views_inplace --repeats 7 --json out.json
    python -m benchmarks --device cuda   # CuPy versions
    python -m benchmarks --case overhead --profile 15   # where minitorch's time goes (cProfile)

Cases marked ``peak_memory`` (mlp_step, elementwise_big) also get a second table: the peak memory one run
allocates, traced by ``tracemalloc`` the same way on both sides (numpy reports its buffers to it; memory that
exists before the run, such as the weights, is not counted; the compiled side's buffers kept between calls are
added to its peak). CPU only: tracemalloc does not see GPU memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc

import numpy as np

import minitorch

from . import cases


def _interleaved_medians(functions, repeats: int, sync) -> tuple[list[float], list[float]]:
    """Median seconds of each function, and for each function after the first two, and the first, the median over
    repeats of its time / the second's (numpy's): ``ratios[0]`` is the first's, ``ratios[k]`` the (k+1)-th's.

    The functions take turns (minitorch, numpy, [torch], minitorch, ...), so a change of load on a shared
    machine hits every column alike and the ratio is taken turn by turn. Each turn runs its function once
    untimed first: the timed run finds the caches warm, as in a training loop, not left by the other side."""
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for fn, column in zip(functions, times):
            fn()  # warm-up
            sync()
            start = time.perf_counter()
            fn()
            sync()
            column.append(time.perf_counter() - start)
    ratios = [statistics.median(a / b for a, b in zip(column, times[1])) for i, column in enumerate(times) if i != 1]
    return [statistics.median(column) for column in times], ratios


def _peak_mib(fn) -> float:
    """The peak of memory allocated while ``fn`` runs once (after a warm-up run), in MiB."""
    fn()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _profile(case, name: str, repeats: int, top: int) -> None:
    """cProfile of ``repeats`` runs of the case's minitorch side (after a warm-up): where the time goes."""
    import cProfile
    import pstats

    case.minitorch()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeats):
        case.minitorch()
    profiler.disable()
    print(f"\n== {name}: {repeats} runs of the minitorch side (cProfile adds about 2x to Python-heavy code)")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def default_cases() -> list[str]:
    """What ``python -m benchmarks`` runs with no ``--case``: every case that is not ``heavy``."""
    return [name for name, case in cases.CASES.items() if not case.heavy]


def _torch_available():
    try:
        import torch  # noqa: F401

        return True
    except ImportError:
        return False


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", nargs="*", default=None, choices=list(cases.CASES), metavar="CASE",
                        help=f"cases to run (default: {', '.join(default_cases())}; also: "
                             f"{', '.join(n for n in cases.CASES if n not in default_cases())})")
    parser.add_argument("--all", action="store_true", help="run every case, the heavy ones included")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for every column (default 1)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="instead of timing, profile each case's minitorch side (cProfile, --repeats runs) "
                             "and print its N most expensive functions by own time")
    args = parser.parse_args(argv)

    minitorch.set_num_threads(args.threads)
    if args.profile:
        for name in args.case or (list(cases.CASES) if args.all else default_cases()):
            _profile(cases.CASES[name](args.device), name, args.repeats, args.profile)
        return
    with_torch = _torch_available() and args.device == "cpu"
    if with_torch:
        import torch

        torch.set_num_threads(args.threads)
    sync = (lambda: minitorch.cuda.synchronize()) if args.device == "cuda" else (lambda: None)

    print(f"minitorch {minitorch.__version__}, numpy {np.__version__}, device {args.device}, "
          f"BLAS threads {minitorch.get_num_threads()}, repeats {args.repeats}")
    header = f"{'case':<18}{'unit':>6}{'minitorch':>11}{'compiled':>10}{'numpy':>10}{'ratio':>7}{'c/np':>7}"
    if with_torch:
        header += f"{'torch':>10}{'c/torch':>8}"
    header += f"{'compile s':>10}"
    print(header)
    print("-" * len(header))
    results = []
    names = args.case or (list(cases.CASES) if args.all else default_cases())
    for name in names:
        case = cases.CASES[name](args.device)
        columns = {"minitorch": case.minitorch, "numpy": case.numpy}
        if case.compiled is not None:
            columns["compiled"] = case.compiled
        if with_torch and case.torch is not None:
            columns["torch"] = case.torch
        medians, ratios = _interleaved_medians(list(columns.values()), args.repeats, sync)
        row = {"case": name, "unit": case.unit}
        for column, median in zip(columns, medians):
            row[column] = median * case.scale
        row["ratio"] = ratios[0]  # minitorch / numpy, turn by turn
        names_in_order = list(columns)
        if "compiled" in row:
            row["compiled_ratio"] = ratios[names_in_order.index("compiled") - 1]
            row["compile_seconds"] = case.compile_seconds()
            if "torch" in row:
                row["compiled_over_torch"] = row["compiled"] / row["torch"]
        line = (f"{name:<18}{case.unit:>6}{row['minitorch']:>11.3f}{row.get('compiled', float('nan')):>10.3f}"
                f"{row['numpy']:>10.3f}{row['ratio']:>7.2f}{row.get('compiled_ratio', float('nan')):>7.2f}")
        if with_torch:
            line += f"{row.get('torch', float('nan')):>10.3f}{row.get('compiled_over_torch', float('nan')):>8.2f}"
        line += f"{row.get('compile_seconds', float('nan')):>10.3f}"
        print(line)
        if case.peak_memory and args.device == "cpu":
            row["peak_mib_minitorch"] = _peak_mib(case.minitorch)
            row["peak_mib_numpy"] = _peak_mib(case.numpy)
            row["peak_ratio"] = row["peak_mib_minitorch"] / row["peak_mib_numpy"]
            if case.compiled is not None:
                row["peak_mib_compiled"] = _peak_mib(case.compiled) + case.resident_mib()
        results.append(row)
        del case  # free the case's arrays before the next one
    memory_rows = [row for row in results if "peak_mib_numpy" in row]
    if memory_rows:
        header = f"{'peak memory':<18}{'unit':>6}{'minitorch':>11}{'compiled':>10}{'numpy':>10}{'ratio':>7}"
        print(f"\n{header}\n{'-' * len(header)}")
        for row in memory_rows:
            print(f"{row['case']:<18}{'MiB':>6}{row['peak_mib_minitorch']:>11.1f}"
                  f"{row.get('peak_mib_compiled', float('nan')):>10.1f}{row['peak_mib_numpy']:>10.1f}"
                  f"{row['peak_ratio']:>7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "threads": args.threads, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
