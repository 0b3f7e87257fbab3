"""PyTorch's element-by-element samplers (Gamma, Poisson, Binomial, Dirichlet): minitorch against PyTorch in
the same run, after the same seed, with a check that both drew the same numbers.

    python -m benchmarks.random_samplers            # 1e5 draws, best of 3
    python -m benchmarks.random_samplers --size 1000 --repeats 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import minitorch


def cases(lib, size: int):
    """name -> a function drawing ``size`` samples (Dirichlet: size / 10 rows of 10) with library ``lib``."""
    lib.manual_seed(0)
    alphas = lib.rand(size) * 3 + 0.2
    rates = lib.rand(size) * 30
    counts, probs = (lib.rand(size) * 200).floor(), lib.rand(size)
    concentration = lib.rand(max(size // 10, 1), 10) + 0.5
    D = lib.distributions
    return {
        "Gamma float32": lambda: D.Gamma(alphas, 1.0).sample(),
        "Gamma float64": lambda: D.Gamma(alphas.to(lib.float64), 1.0).sample(),
        "Poisson": lambda: lib.poisson(rates),
        "Binomial float32": lambda: lib.binomial(counts, probs),
        "Binomial float64": lambda: lib.binomial(counts.to(lib.float64), probs.to(lib.float64)),
        "Dirichlet (x10)": lambda: D.Dirichlet(concentration).sample(),
        # one parameter set for every element: the vectorised paths
        "Poisson(30)": lambda: lib.poisson(lib.full((size,), 30.0)),
        "Binomial(100,.3)": lambda: D.Binomial(100, probs=lib.tensor(0.3)).sample((size,)),
        "Binomial(8,.3)": lambda: D.Binomial(8, probs=lib.tensor(0.3)).sample((size,)),
    }


def best_time(draw, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        draw()
        best = min(best, time.perf_counter() - start)
    return best


def run(size: int, repeats: int, with_torch: bool = True) -> list[dict]:
    """One row per sampler: seconds for minitorch (and torch), and whether the samples are the same bits."""
    torch = None
    if with_torch:
        try:
            import torch
        except ImportError:
            torch = None
    ours = cases(minitorch, size)
    theirs = cases(torch, size) if torch is not None else {}
    threads = torch.get_num_threads() if torch is not None else 1
    if torch is not None:
        torch.set_num_threads(1)  # the samplers are serial loops in PyTorch too
    rows = []
    try:
        for name, draw in ours.items():
            row = {"case": name, "minitorch_s": best_time(draw, repeats)}
            if name in theirs:
                row["torch_s"] = best_time(theirs[name], repeats)
                minitorch.manual_seed(1)
                torch.manual_seed(1)
                row["same"] = bool(np.array_equal(draw().numpy(), theirs[name]().numpy()))
            rows.append(row)
    finally:
        if torch is not None:
            torch.set_num_threads(threads)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'case':<18}{'minitorch s':>12}{'torch s':>10}{'ratio':>8}  same numbers")
    for row in run(args.size, args.repeats):
        torch_s = row.get("torch_s")
        tail = f"{torch_s:>10.3f}{row['minitorch_s'] / torch_s:>8.1f}  {row['same']}" if torch_s else ""
        print(f"{row['case']:<18}{row['minitorch_s']:>12.3f}{tail}")


if __name__ == "__main__":
    main()
