"""Sparse benchmark cases. ``SparseMm``: a 100,000 x 100,000 COO matrix with 1,000,000 nonzeros times a
dense 100,000 x 64 matrix, forward and backward (masked sparse gradient + dense gradient), beside a
hand-written numpy version (np.add.at scatter-adds) and scipy.sparse when installed. Nothing of size
100,000 x 100,000 is ever allocated; ``python -m benchmarks.sparse_cases`` also prints peak memory.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import minitorch
import minitorch.sparse

from .base import Case


class SparseMm(Case):
    """torch.sparse.mm(S, D).sum-weighted backward: S (n x n, nnz entries), D (n x k)."""

    n, nnz, k = 100_000, 1_000_000, 64
    heavy = True  # about 1 GB of traffic per run: only with --case sparse_mm or --all

    def __init__(self, device, small: bool = False, n: int | None = None, nnz: int | None = None,
                 k: int | None = None):
        if small:
            n, nnz, k = 40, 120, 3
        n, nnz, k = n or self.n, nnz or self.nnz, k or self.k
        rng = np.random.default_rng(0)
        self.rows, self.cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
        self.values = rng.standard_normal(nnz).astype(np.float32)
        self.dense = rng.standard_normal((n, k)).astype(np.float32)
        self.weight = rng.standard_normal((n, k)).astype(np.float32)  # d loss / d out
        indices = minitorch.tensor(np.stack([self.rows, self.cols]), device=device)
        self.s = minitorch.sparse.sparse_coo_tensor(indices, minitorch.tensor(self.values, device=device), (n, n))
        self.s = self.s.coalesce().requires_grad_()  # coalesced once, as a model's fixed adjacency would be
        coalesced = self.s._indices().cpu().numpy()
        self.rows, self.cols = coalesced[0], coalesced[1]
        self.values = self.s._values().cpu().numpy()
        self.d = minitorch.tensor(self.dense, device=device, requires_grad=True)
        self.w = minitorch.tensor(self.weight, device=device)
        self.shape = (n, n)

    def minitorch(self):
        out = minitorch.sparse.mm(self.s, self.d)
        out.backward(self.w)
        grads = self.s.grad, self.d.grad  # the sparse gradient has S's (coalesced) pattern
        self.s.grad = self.d.grad = None
        return out, grads

    def numpy(self):
        rows, cols, values = self.rows, self.cols, self.values
        out = np.zeros_like(self.weight)
        np.add.at(out, rows, values[:, None] * self.dense[cols])
        grad_values = (self.weight[rows] * self.dense[cols]).sum(1)  # the masked sparse gradient
        grad_dense = np.zeros_like(self.dense)
        np.add.at(grad_dense, cols, values[:, None] * self.weight[rows])
        return out, (grad_values, grad_dense)

    def scipy(self):
        from scipy import sparse as sp

        matrix = sp.csr_matrix((self.values, (self.rows, self.cols)), shape=self.shape)
        out = matrix @ self.dense
        grad_values = (self.weight[self.rows] * self.dense[self.cols]).sum(1)
        grad_dense = matrix.T @ self.weight
        return out, (grad_values, grad_dense)


def _measure(fn, repeats: int = 3) -> tuple[float, float]:
    """(median seconds, peak traced MiB) of ``fn``; numpy reports its buffers to tracemalloc."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return sorted(times)[len(times) // 2], peak / 2**20


def main() -> None:
    case = SparseMm("cpu")
    dense_mib = case.n * case.n * 4 / 2**20
    print(f"sparse_mm: {case.n}x{case.n} with {case.nnz} nonzeros @ {case.n}x{case.k} (the dense matrix would be "
          f"{dense_mib:,.0f} MiB)")
    runs = [("minitorch", case.minitorch), ("numpy", case.numpy)]
    try:
        import scipy  # noqa: F401

        runs.append(("scipy.sparse", case.scipy))
    except ImportError:
        print("scipy not installed: its column is skipped")
    for name, fn in runs:
        seconds, peak = _measure(fn)
        print(f"{name:<14}{seconds * 1e3:10.1f} ms   peak {peak:8.1f} MiB")


CASES = {"sparse_mm": SparseMm}

if __name__ == "__main__":
    main()
