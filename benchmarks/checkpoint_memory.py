"""Activation checkpointing on a deep MLP: peak memory and time of one forward + backward, with and without it.

    python -m benchmarks.checkpoint_memory                  # 32 layers of Linear(256, 256) + ReLU, batch 1024
    python -m benchmarks.checkpoint_memory --layers 16 --width 128 --batch 256 --json out.json

The peak is traced by ``tracemalloc`` as run.py does (numpy reports its buffers to it; the weights exist before
the run and are not counted). Every variant must give the plain run's gradients, or the script stops.
"""

from __future__ import annotations

import argparse
import json
import time

import minitorch
from minitorch import nn
from minitorch.utils.checkpoint import checkpoint, checkpoint_sequential

from .run import _peak_mib


def _model(layers: int, width: int) -> nn.Sequential:
    minitorch.manual_seed(0)
    blocks = []
    for _ in range(layers):
        blocks += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*blocks)


def _variants(model: nn.Sequential, layers: int) -> dict:
    """name -> function(x) -> output (each a way to run the same model)."""
    blocks = list(model.children())
    per_layer = [nn.Sequential(blocks[i], blocks[i + 1]) for i in range(0, len(blocks), 2)]
    segments = max(1, round(layers ** 0.5))

    def every_layer(x):
        for block in per_layer[:-1]:
            x = checkpoint(block, x, use_reentrant=False)
        return per_layer[-1](x)

    return {
        "plain": model,
        f"sequential, {segments} segments": lambda x: checkpoint_sequential(model, segments, x, use_reentrant=False),
        f"sequential, {segments} segments, reentrant": lambda x: checkpoint_sequential(model, segments, x,
                                                                                       use_reentrant=True),
        "every layer": every_layer,
    }


def _step(model, run, x):
    def step():
        model.zero_grad(set_to_none=True)
        run(x).pow(2).mean().backward()
        return [p.grad for p in model.parameters()]

    return step


def measure(layers: int = 32, width: int = 256, batch: int = 1024, repeats: int = 5) -> list[dict]:
    model = _model(layers, width)
    x = minitorch.randn(batch, width).requires_grad_()
    rows, reference = [], None
    for name, run in _variants(model, layers).items():
        step = _step(model, run, x)
        grads = [g.clone() for g in step()]
        if reference is None:
            reference = grads
        elif not all(minitorch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(reference, grads)):
            raise AssertionError(f"{name}: the gradients differ from the plain run's")
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        rows.append({"variant": name, "peak_mib": _peak_mib(step), "ms": 1e3 * min(times)})  # best of: load moves it
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    minitorch.set_num_threads(1)
    rows = measure(args.layers, args.width, args.batch, args.repeats)
    activation = args.batch * args.width * 4 / 2**20
    print(f"{args.layers} x (Linear({args.width}, {args.width}) + ReLU), batch {args.batch}, float32: "
          f"one activation {activation:.2f} MiB")
    print(f"{'variant':<36}{'peak MiB':>10}{'ms':>10}")
    for row in rows:
        print(f"{row['variant']:<36}{row['peak_mib']:>10.1f}{row['ms']:>10.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
