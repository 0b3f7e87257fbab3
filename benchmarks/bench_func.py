"""Per-sample gradients of an MLP (issue 17): ``vmap(grad(loss))`` against a Python loop of
``grad(loss)`` over the samples, and against PyTorch's ``torch.func`` when it is installed, in one run.

    python -m benchmarks.bench_func                     # batch 64, 7 repeats
    python -m benchmarks.bench_func --batch 64 --repeats 11

Both minitorch's and PyTorch's vmap run each op once on the whole batch (batching rules, docs/func.md).
Median and best of the repeats are printed: on a shared machine the median moves with the load, the best
time shows what the code costs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import minitorch

SIZES = (32, 128, 10)  # in, hidden, out


def make_arrays(batch: int, seed: int = 0) -> tuple[dict, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d_in, hidden, d_out = SIZES
    params = {
        "w1": (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, d_out)) / np.sqrt(hidden)).astype(np.float32),
        "b2": np.zeros(d_out, np.float32),
    }
    return params, rng.standard_normal((batch, d_in)).astype(np.float32), rng.integers(0, d_out, batch)


def loss_fn(t):
    """The per-sample loss, written once for ``t`` = minitorch or torch."""
    F = t.nn.functional

    def loss(params, x, y):
        h = F.relu(x @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        return F.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0))

    return loss


def variants(t, arrays: tuple) -> dict:
    """name -> a function computing the per-sample gradients (a dict of (batch, *shape) tensors)."""
    params_np, xs_np, ys_np = arrays
    params = {k: t.tensor(v) for k, v in params_np.items()}
    xs, ys = t.tensor(xs_np), t.tensor(ys_np)
    g = t.func.grad(loss_fn(t))
    batched = t.func.vmap(g, in_dims=(None, 0, 0))

    def loop():
        grads = [g(params, xs[i], ys[i]) for i in range(xs.shape[0])]
        return {k: t.stack([gr[k] for gr in grads]) for k in params}

    return {"vmap(grad)": lambda: batched(params, xs, ys), "loop of grad": loop}


def _times_ms(fn, repeats: int) -> tuple[float, float]:
    """(median, best) of ``repeats`` timed calls, each after one untimed call, in milliseconds."""
    times = []
    for _ in range(repeats):
        fn()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, min(times) * 1e3


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    arrays = make_arrays(args.batch)
    rows = {f"minitorch {k}": fn for k, fn in variants(minitorch, arrays).items()}
    try:
        import torch  # optional: the reference column
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        rows.update({f"torch {k}": fn for k, fn in variants(torch, arrays).items()})
    results = {name: _times_ms(fn, args.repeats) for name, fn in rows.items()}
    print(f"per-sample gradients, MLP {SIZES[0]}-{SIZES[1]}-{SIZES[2]}, batch {args.batch}, float32 "
          f"({args.repeats} repeats)")
    print(f"  {'variant':24s} {'median':>9s}    {'best':>9s}")
    for name, (median, best) in results.items():
        print(f"  {name:24s} {median:9.2f} ms {best:9.2f} ms")
    return results


if __name__ == "__main__":
    main()
