"""A random stream over any numpy-API ``Generator`` (CuPy's XORWOW on CUDA), with the methods of
``torch_mt.TorchGenerator``: seeded draws are reproducible, but the numbers are the library's own,
not PyTorch's. Its state is the seed and the number of draws so far is not tracked: ``set_state``
restarts the stream from the seed it holds."""

from __future__ import annotations

import struct

_STATE = struct.Struct("<QQ")  # seed, offset: the layout of PyTorch's CUDA state (offset kept at 0)


class ArrayStream:
    def __init__(self, make_generator, xp, seed: int):
        self._make, self.xp, self.initial_seed = make_generator, xp, seed
        self._rng = make_generator(seed)

    def uniform(self, n, dtype, low=0.0, high=1.0):
        u = self._rng.random(size=n)
        values = (u * (high - low) + low).astype(dtype)
        return self.xp.where(values >= high, dtype.type(low), values)  # float32 rounding may reach high

    def normal(self, n, dtype, mean=0.0, std=1.0, contiguous=True):
        return (self._rng.standard_normal(size=n) * std + mean).astype(dtype)

    def random_from_to(self, n, low, high):
        return self._rng.integers(low, high, size=n, dtype=self.xp.int64)

    def random_bits(self, n, dtype):
        dtype = self.xp.dtype(dtype)
        if dtype.kind == "b":
            return self._rng.integers(0, 2, size=n).astype(dtype)
        top = 2 ** {2: 11, 4: 24, 8: 53}[dtype.itemsize] if dtype.kind == "f" else int(self.xp.iinfo(dtype).max)
        return self._rng.integers(0, top, size=n, dtype=self.xp.int64, endpoint=True).astype(dtype)

    def randperm(self, n):
        return self.xp.argsort(self._rng.random(size=n)).astype(self.xp.int64)

    def bernoulli_scalar(self, n, p):
        return self._rng.random(size=n) < p

    def bernoulli_tensor(self, p):
        return self._rng.random(size=p.size) < p.reshape(-1)

    def exponential(self, n, dtype, lambd):
        return (self._rng.standard_exponential(size=n) / lambd).astype(dtype)

    def geometric(self, n, p):
        return self.xp.ceil(self.xp.log(1.0 - self._rng.random(size=n)) / self.xp.log1p(-p))

    def log_normal(self, n, mean, std):
        return self.xp.exp(self._rng.standard_normal(size=n) * std + mean)

    def cauchy(self, n, median, sigma):
        return median + sigma * self.xp.tan(self.xp.pi * (self._rng.random(size=n) - 0.5))

    def poisson(self, rates):
        return self._rng.poisson(rates).astype(self.xp.float64)

    def standard_gamma(self, alphas, single: bool):
        return self._rng.standard_gamma(alphas).astype(self.xp.float64)

    def binomial(self, counts, probs, single: bool):
        """The library's sampler on whole trials; PyTorch's edges: ``count <= 0`` or ``prob <= 0`` give 0,
        ``prob >= 1`` gives ``count``, a NaN or infinite count NaN."""
        xp = self.xp
        zero, full = (counts <= 0) | (probs <= 0), probs >= 1
        drawn = ~zero & ~full & xp.isfinite(counts) & (probs == probs)
        draws = self._rng.binomial(xp.where(drawn, xp.floor(counts), 0).astype(xp.int64), xp.where(drawn, probs, 0.5))
        return xp.where(zero, 0.0, xp.where(full, counts, xp.where(drawn, draws.astype(xp.float64), xp.nan)))

    def multinomial(self, weights, num_samples, replacement):
        xp = self.xp
        rows, categories = weights.shape
        if not replacement or num_samples == 1:
            keys = weights / self._rng.standard_exponential(size=(rows, categories))
            return xp.argsort(-keys, axis=1)[:, :num_samples]
        cumulative = xp.cumsum(weights.astype(xp.float64), axis=1)
        cumulative /= cumulative[:, -1:]
        u = self._rng.random(size=(rows, num_samples))
        samples = [xp.searchsorted(cumulative[row], u[row]) for row in range(rows)]
        return xp.stack(samples).clip(0, categories - 1)

    def get_state(self) -> bytes:
        return _STATE.pack(self.initial_seed, 0)

    def set_state(self, payload: bytes) -> None:
        if len(payload) != _STATE.size:
            raise ValueError(f"RNG state is wrong size: expected {_STATE.size} bytes, got {len(payload)}")
        seed, _ = _STATE.unpack(payload)
        self.initial_seed, self._rng = seed, self._make(seed)
