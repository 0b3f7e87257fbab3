"""benchmarks/bench_func.py computes the same per-sample gradients with vmap(grad) and with a loop."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import minitorch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root holds benchmarks/
from benchmarks import bench_func  # noqa: E402


def test_vmap_grad_and_loop_agree():
    fns = bench_func.variants(minitorch, bench_func.make_arrays(batch=4))
    batched, looped = fns["vmap(grad)"](), fns["loop of grad"]()
    assert set(batched) == {"w1", "b1", "w2", "b2"}
    for k in batched:
        assert batched[k].shape[0] == 4
        np.testing.assert_allclose(batched[k].numpy(), looped[k].numpy(), rtol=1e-6, atol=1e-7)
