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


def _log_softmax_rows(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


class MlpStep(Case):
    """MLP 784-512-512-10, ReLU, batch 256, cross-entropy, backward, SGD step (float32)."""

    def __init__(self, device):
        rng = np.random.default_rng(0)
        sizes = [(784, 512), (512, 512), (512, 10)]
        self.weights = [(rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32) for i, o in sizes]
        self.biases = [np.zeros(o, np.float32) for _, o in sizes]
        self.x = rng.standard_normal((256, 784)).astype(np.float32)
        self.y = rng.integers(0, 10, 256)
        self.params = [minitorch.tensor(a, device=device, requires_grad=True) for a in self.weights + self.biases]
        self.tx = minitorch.tensor(self.x, device=device)
        self.ty = minitorch.tensor(self.y, device=device)
        self.F = minitorch.nn.functional

    def minitorch(self):
        w1, w2, w3, b1, b2, b3 = self.params
        F = self.F
        h = F.relu(F.linear(self.tx, w1, b1))
        h = F.relu(F.linear(h, w2, b2))
        loss = F.cross_entropy(F.linear(h, w3, b3), self.ty)
        loss.backward()
        with minitorch.no_grad():
            for p in self.params:
                p.sub_(p.grad, alpha=0.01)
                p.grad = None

    def numpy(self):
        (w1, w2, w3), (b1, b2, b3), x, y = self.weights, self.biases, self.x, self.y
        z1 = x @ w1.T + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2.T + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3.T + b3
        logp = _log_softmax_rows(logits)
        -logp[np.arange(len(y)), y].mean()
        g = np.exp(logp)
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        grads = [g.T @ h2, g.sum(0)]
        g = (g @ w3) * (z2 > 0)
        grads += [g.T @ h1, g.sum(0)]
        g = (g @ w2) * (z1 > 0)
        grads += [g.T @ x, g.sum(0)]
        for p, dp in zip((w3, b3, w2, b2, w1, b1), grads):
            p -= 0.0 * dp  # the update's cost, without drifting the reference weights


class ConvStep(Case):
    """conv2d 1 -> 16 channels 3x3 on a batch of 32 28x28 images, relu, mean, backward."""

    def __init__(self, device):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
        self.w = (rng.standard_normal((16, 1, 3, 3)) / 3).astype(np.float32)
        self.tx = minitorch.tensor(self.x, device=device, requires_grad=True)
        self.tw = minitorch.tensor(self.w, device=device, requires_grad=True)

    def minitorch(self):
        F = minitorch.nn.functional
        F.relu(F.conv2d(self.tx, self.tw)).mean().backward()
        self.tx.grad = self.tw.grad = None

    def numpy(self):
        x, w = self.x, self.w
        n, _, h, wd = x.shape
        windows = np.lib.stride_tricks.sliding_window_view(x[:, 0], (3, 3), axis=(1, 2))  # (n, 26, 26, 3, 3)
        cols = windows.reshape(n * 26 * 26, 9)
        out = (cols @ w.reshape(16, 9).T).reshape(n, 26, 26, 16)
        relu = np.maximum(out, 0)
        relu.mean()
        g = (out > 0) / relu.size  # d mean / d relu, through relu
        g = g.astype(np.float32).reshape(-1, 16)
        (g.T @ cols).reshape(16, 1, 3, 3)  # weight gradient
        gcols = (g @ w.reshape(16, 9)).reshape(n, 26, 26, 3, 3)
        gx = np.zeros((n, h, wd), np.float32)
        for i in range(3):
            for j in range(3):
                gx[:, i : i + 26, j : j + 26] += gcols[..., i, j]


CASES.update(mlp_step=MlpStep, conv_step=ConvStep)

from .sparse_cases import SparseMm  # noqa: E402

CASES["sparse_mm"] = SparseMm
