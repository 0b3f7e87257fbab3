"""The benchmark cases. Each has a minitorch version, a hand-written numpy version of the same
forward and backward (the floor any numpy-backed framework can reach), and optionally torch."""

from __future__ import annotations

import numpy as np

import minitorch


class Case:
    unit = "ms"
    scale = 1e3  # seconds -> unit
    torch = None


class Overhead(Case):
    """Tiny tensors: a chain of 100 elementwise ops, sum, backward; microseconds per op."""

    unit = "us/op"
    scale = 1e6 / 100

    def __init__(self, device):
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
        self.x = minitorch.tensor(a, device=device, requires_grad=True)
        self.y = minitorch.tensor(b, device=device, requires_grad=True)
        self.a, self.b = a, b

    def minitorch(self):
        x, y = self.x, self.y
        z = x
        for _ in range(20):  # 5 ops per round
            z = ((z + y) * x - y).tanh().exp()
        z.sum().backward()
        x.grad = y.grad = None

    def numpy(self):
        x, y = self.a, self.b
        zs = [x]
        for _ in range(20):
            s = zs[-1] + y
            m = s * x
            d = m - y
            t = np.tanh(d)
            e = np.exp(t)
            zs.append((s, m, d, t, e))
            zs.append(e)
        g = np.ones_like(x)
        gx = np.zeros_like(x)
        gy = np.zeros_like(y)
        for i in range(len(zs) - 1, 0, -2):
            s, m, d, t, e = zs[i - 1]
            g = g * e
            g = g * (1 - t * t)
            gy -= g
            gx += g * s
            g = g * x
            gy += g
        gx += g


class ViewsInplace(Case):
    """x (1000, 1000) requires grad; y = x * 1; y[:, ::2].mul_(2); y.t()[10:20].add_(1); y.sum().backward()."""

    def __init__(self, device):
        data = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
        self.x = minitorch.tensor(data, device=device, requires_grad=True)
        self.data = data

    def minitorch(self):
        y = self.x * 1
        y[:, ::2].mul_(2)
        y.t()[10:20].add_(1)
        y.sum().backward()
        self.x.grad = None

    def numpy(self):
        y = self.data * 1
        y[:, ::2] *= 2
        y.T[10:20] += 1
        y.sum()
        g = np.ones_like(y)
        g[:, ::2] *= 2
        g * 1


class ElementwiseBig(Case):
    """x, y of 4M elements requiring grad; (x * y + x).tanh().sum(); backward."""

    def __init__(self, device):
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal(4_000_000).astype(np.float32)
        self.b = rng.standard_normal(4_000_000).astype(np.float32)
        self.x = minitorch.tensor(self.a, device=device, requires_grad=True)
        self.y = minitorch.tensor(self.b, device=device, requires_grad=True)

    def minitorch(self):
        (self.x * self.y + self.x).tanh().sum().backward()
        self.x.grad = self.y.grad = None

    def numpy(self):
        x, y = self.a, self.b
        t = np.tanh(x * y + x)
        t.sum()
        g = 1 - t * t
        g * (y + 1), g * x


class MatmulBig(Case):
    """1024x1024 @ 1024x1024, backward for both."""

    def __init__(self, device):
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((1024, 1024)).astype(np.float32)
        self.b = rng.standard_normal((1024, 1024)).astype(np.float32)
        self.x = minitorch.tensor(self.a, device=device, requires_grad=True)
        self.y = minitorch.tensor(self.b, device=device, requires_grad=True)

    def minitorch(self):
        (self.x @ self.y).sum().backward()
        self.x.grad = self.y.grad = None

    def numpy(self):
        (self.a @ self.b).sum()
        g = np.ones((1024, 1024), np.float32)
        g @ self.b.T, self.a.T @ g


CASES = {
    "overhead": Overhead,
    "views_inplace": ViewsInplace,
    "elementwise_big": ElementwiseBig,
    "matmul_big": MatmulBig,
}
