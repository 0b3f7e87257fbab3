"""The benchmark cases. Each has a minitorch version, a hand-written numpy version of the same
forward and backward (the floor any numpy-backed framework can reach), and optionally torch."""

from __future__ import annotations

import numpy as np

import minitorch

from .base import Case, torch_module


def chain(x, y):
    """overhead's computation: 20 rounds of 5 elementwise ops on tiny tensors, summed."""
    z = x
    for _ in range(20):
        z = ((z + y) * x - y).tanh().exp()
    return z.sum()


def elementwise(x, y):
    return (x * y + x).tanh().sum()


def matmul_sum(x, y):
    return (x @ y).sum()


def pair_step(fn, x, y):
    """loss = fn(x, y); backward; the loss and both gradients (the .grad fields cleared for the next run)."""
    loss = fn(x, y)
    loss.backward()
    grads = x.grad, y.grad
    x.grad = y.grad = None
    return loss, grads


class PairCase(Case):
    """A case whose step is ``pair_step(function, x, y)``: minitorch eager, compiled, and PyTorch alike."""

    function = staticmethod(chain)

    def setup_sides(self, device, a, b):
        self.x = minitorch.tensor(a, device=device, requires_grad=True)
        self.y = minitorch.tensor(b, device=device, requires_grad=True)
        self.compiled_function = minitorch.compile(self.function)
        self.compiled_functions = (self.compiled_function,)
        torch = torch_module(device)
        if torch is not None:
            self.tx = torch.tensor(a, requires_grad=True)
            self.ty = torch.tensor(b, requires_grad=True)
            self.torch = lambda: pair_step(self.function, self.tx, self.ty)

    def compiled(self):
        return pair_step(self.compiled_function, self.x, self.y)


class Overhead(PairCase):
    """Tiny tensors: a chain of 100 elementwise ops, sum, backward; microseconds per op."""

    unit = "us/op"
    scale = 1e6 / 100
    function = staticmethod(chain)

    def __init__(self, device, small: bool = False):
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
        self.setup_sides(device, a, b)
        self.a, self.b = a, b

    def minitorch(self):
        return pair_step(chain, self.x, self.y)

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
        loss = zs[-1].sum()
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
        return loss, (gx, gy)


def _views_inplace(x):
    y = x * 1
    y[:, ::2].mul_(2)
    y.t()[10:20].add_(1)
    return y.sum()


class ViewsInplace(Case):
    """x (1000, 1000) requires grad; y = x * 1; y[:, ::2].mul_(2); y.t()[10:20].add_(1); y.sum().backward()."""

    def __init__(self, device, small: bool = False):
        n = 24 if small else 1000
        data = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
        self.x = minitorch.tensor(data, device=device, requires_grad=True)
        self.data = data

        self.compiled_function = minitorch.compile(_views_inplace)
        self.compiled_functions = (self.compiled_function,)

    def minitorch(self):
        return self._step(_views_inplace)

    def compiled(self):
        """In-place writes are graph breaks: this runs eagerly under the compiled wrapper (the guard cost)."""
        return self._step(self.compiled_function)

    def _step(self, fn):
        loss = fn(self.x)
        loss.backward()
        grad, self.x.grad = self.x.grad, None
        return loss, (grad,)

    def numpy(self):
        y = self.data * 1
        y[:, ::2] *= 2
        y.T[10:20] += 1
        loss = y.sum()
        g = np.ones_like(y)
        g[:, ::2] *= 2
        return loss, (g * 1,)


class ElementwiseBig(PairCase):
    """x, y of 4M elements requiring grad; (x * y + x).tanh().sum(); backward."""

    peak_memory = True
    function = staticmethod(elementwise)

    def __init__(self, device, small: bool = False):
        rng = np.random.default_rng(0)
        n = 50 if small else 4_000_000
        self.a = rng.standard_normal(n).astype(np.float32)
        self.b = rng.standard_normal(n).astype(np.float32)
        self.setup_sides(device, self.a, self.b)

    def minitorch(self):
        return pair_step(elementwise, self.x, self.y)

    def numpy(self):
        x, y = self.a, self.b
        t = np.tanh(x * y + x)
        loss = t.sum()
        g = 1 - t * t
        return loss, (g * (y + 1), g * x)


class MatmulBig(PairCase):
    """1024x1024 @ 1024x1024, backward for both."""

    function = staticmethod(matmul_sum)

    def __init__(self, device, small: bool = False):
        rng = np.random.default_rng(0)
        n = 5 if small else 1024
        self.a = rng.standard_normal((n, n)).astype(np.float32)
        self.b = rng.standard_normal((n, n)).astype(np.float32)
        self.setup_sides(device, self.a, self.b)

    def minitorch(self):
        return pair_step(matmul_sum, self.x, self.y)

    def numpy(self):
        loss = (self.a @ self.b).sum()
        g = np.ones(self.a.shape, np.float32)
        return loss, (g @ self.b.T, self.a.T @ g)


CASES = {
    "overhead": Overhead,
    "views_inplace": ViewsInplace,
    "elementwise_big": ElementwiseBig,
    "matmul_big": MatmulBig,
}


def _log_softmax_rows(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _mlp_loss(x, y, w1, w2, w3, b1, b2, b3):
    F = minitorch.nn.functional if isinstance(x, minitorch.Tensor) else _torch_functional()
    h = F.relu(F.linear(x, w1, b1))
    h = F.relu(F.linear(h, w2, b2))
    return F.cross_entropy(F.linear(h, w3, b3), y)


def _torch_functional():
    import torch.nn.functional

    return torch.nn.functional


def _mlp_step(library, loss_function, x, y, params):
    loss = loss_function(x, y, *params)
    loss.backward()
    grads = [p.grad for p in params]
    with library.no_grad():
        for p in params:
            p.sub_(p.grad, alpha=0.01)
            p.grad = None
    return loss, grads


class MlpStep(Case):
    """MLP 784-512-512-10, ReLU, batch 256, cross-entropy, backward, SGD step (float32)."""

    peak_memory = True

    def __init__(self, device, small: bool = False):
        rng = np.random.default_rng(0)
        inputs, hidden, batch = (12, 8, 6) if small else (784, 512, 256)
        sizes = [(inputs, hidden), (hidden, hidden), (hidden, 10)]
        self.weights = [(rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32) for i, o in sizes]
        self.biases = [np.zeros(o, np.float32) for _, o in sizes]
        self.x = rng.standard_normal((batch, inputs)).astype(np.float32)
        self.y = rng.integers(0, 10, batch)
        self.params = [minitorch.tensor(a, device=device, requires_grad=True) for a in self.weights + self.biases]
        self.tx = minitorch.tensor(self.x, device=device)
        self.ty = minitorch.tensor(self.y, device=device)
        self.F = minitorch.nn.functional

        self.compiled_loss = minitorch.compile(_mlp_loss)
        self.compiled_functions = (self.compiled_loss,)
        torch = torch_module(device)
        if torch is not None:
            self.torch_params = [torch.tensor(a, requires_grad=True) for a in self.weights + self.biases]
            self.torch_x, self.torch_y = torch.tensor(self.x), torch.tensor(self.y)
            self.torch = lambda: _mlp_step(torch, _mlp_loss, self.torch_x, self.torch_y, self.torch_params)

    def minitorch(self):
        return _mlp_step(minitorch, _mlp_loss, self.tx, self.ty, self.params)

    def compiled(self):
        """The loss (forward and backward) compiled, one plan; the update is the same ``p.sub_`` as the eager side's
        (no optimizer object: the numpy floor's update is one subtraction per parameter too)."""
        return _mlp_step(minitorch, self.compiled_loss, self.tx, self.ty, self.params)

    def numpy(self):
        (w1, w2, w3), (b1, b2, b3), x, y = self.weights, self.biases, self.x, self.y
        z1 = x @ w1.T + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2.T + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3.T + b3
        logp = _log_softmax_rows(logits)
        loss = -logp[np.arange(len(y)), y].mean()
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
        return loss, [grads[i] for i in (4, 2, 0, 5, 3, 1)]  # minitorch's order: w1, w2, w3, b1, b2, b3


def _conv_loss(x, w):
    F = minitorch.nn.functional if isinstance(x, minitorch.Tensor) else _torch_functional()
    return F.relu(F.conv2d(x, w)).mean()


class ConvStep(Case):
    """conv2d 1 -> 16 channels 3x3 on a batch of 32 28x28 images, relu, mean, backward."""

    def __init__(self, device, small: bool = False):
        rng = np.random.default_rng(0)
        batch, side = (2, 6) if small else (32, 28)
        self.x = rng.standard_normal((batch, 1, side, side)).astype(np.float32)
        self.w = (rng.standard_normal((16, 1, 3, 3)) / 3).astype(np.float32)
        self.tx = minitorch.tensor(self.x, device=device, requires_grad=True)
        self.tw = minitorch.tensor(self.w, device=device, requires_grad=True)

        self.compiled_function = minitorch.compile(_conv_loss)
        self.compiled_functions = (self.compiled_function,)
        torch = torch_module(device)
        if torch is not None:
            self.torch_x = torch.tensor(self.x, requires_grad=True)
            self.torch_w = torch.tensor(self.w, requires_grad=True)
            self.torch = lambda: pair_step(_conv_loss, self.torch_x, self.torch_w)

    def minitorch(self):
        return pair_step(_conv_loss, self.tx, self.tw)

    def compiled(self):
        return pair_step(self.compiled_function, self.tx, self.tw)

    def numpy(self):
        x, w = self.x, self.w
        n, _, h, wd = x.shape
        oh, ow = h - 2, wd - 2
        windows = np.lib.stride_tricks.sliding_window_view(x[:, 0], (3, 3), axis=(1, 2))  # (n, oh, ow, 3, 3)
        cols = windows.reshape(n * oh * ow, 9)
        out = (cols @ w.reshape(16, 9).T).reshape(n, oh, ow, 16)
        relu = np.maximum(out, 0)
        loss = relu.mean()
        g = (out > 0) / relu.size  # d mean / d relu, through relu
        g = g.astype(np.float32).reshape(-1, 16)
        gw = (g.T @ cols).reshape(16, 1, 3, 3)  # weight gradient
        gcols = (g @ w.reshape(16, 9)).reshape(n, oh, ow, 3, 3)
        gx = np.zeros((n, h, wd), np.float32)
        for i in range(3):
            for j in range(3):
                gx[:, i : i + oh, j : j + ow] += gcols[..., i, j]
        return loss, (gx[:, None], gw)


CASES.update(mlp_step=MlpStep, conv_step=ConvStep)

from .sparse_cases import SparseMm  # noqa: E402
from .transformer_case import TransformerStep  # noqa: E402

CASES.update(transformer_step=TransformerStep, sparse_mm=SparseMm)
