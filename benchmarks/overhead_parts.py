"""The ``overhead`` case split into its parts, for minitorch and (when installed) PyTorch in the same run.

    python -m benchmarks.overhead_parts [--rounds 15]

Each part is a difference of two timings of the case's program (20 rounds of ``((z + y) * x - y).tanh().exp()``
on 4-element float32 tensors, ``.sum()``, ``.backward()``, reading ``.grad``), in us per op (100 ops):
forward with grad mode off; recording (forward with grad mode on, less the former); backward (the whole step,
less the recording forward: it includes the fixed cost of one ``backward()`` call, about 0.5 us per op here).
Best of ``--rounds`` batches of 100 steps each: the VM's load only ever adds time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import minitorch

from .base import torch_module
from .cases import chain


def _best(fn, rounds: int, steps: int = 100) -> float:
    """us per op of ``fn`` (one step of 100 ops), best of ``rounds`` batches."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(steps):
            fn()
        times.append((time.perf_counter() - start) / steps)
    return min(times) * 1e6 / 100


def parts(lib, rounds: int) -> dict:
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    y = lib.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)

    def forward_no_grad():
        with lib.no_grad():
            chain(x, y)

    def step():
        chain(x, y).backward()
        x.grad, y.grad  # noqa: B018 (read, as the benchmark does)
        x.grad = y.grad = None

    no_grad, forward, total = (_best(fn, rounds) for fn in (forward_no_grad, lambda: chain(x, y), step))
    return {"forward (grad off)": no_grad, "recording": forward - no_grad, "backward": total - forward,
            "total": total}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    columns = {"minitorch": parts(minitorch, args.rounds)}
    torch = torch_module("cpu")
    if torch is not None:
        columns["torch"] = parts(torch, args.rounds)
    print(f"{'us/op':20s}" + "".join(f"{name:>11s}" for name in columns) + ("      ratio" if torch else ""))
    for part in columns["minitorch"]:
        row = [columns[name][part] for name in columns]
        ratio = f"{row[0] / row[1]:11.2f}" if torch is not None and row[1] > 0 else ""
        print(f"{part:20s}" + "".join(f"{v:11.2f}" for v in row) + ratio)


if __name__ == "__main__":
    main()
