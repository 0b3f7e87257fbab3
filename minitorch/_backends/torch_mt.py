"""PyTorch's CPU generator (``CPUGeneratorImpl``) in numpy, so a seeded program draws PyTorch's numbers.

The engine is the 32-bit Mersenne Twister seeded with the low 32 bits of the seed: numpy's MT19937
with its legacy seeding holds the identical key and ``random_raw`` returns the identical outputs,
vectorised. On top sit PyTorch's transformations (``TransformationHelper.h``, ``DistributionsHelper.h``,
the CPU kernels), draw for draw, including the cached second Box-Muller normal and the 5056-byte state.
The facts and how they were checked: docs/random.md. Bit patterns hold for PyTorch's x86-64 Linux
wheels (GCC with FMA contraction, the AVX2 normal kernel, glibc's libm).
"""

from __future__ import annotations

import contextlib
import math
import struct

import numpy as np

from . import torch_samplers
from .exact_float import avx_log, avx_sincos, fma32, fma64, libm

_UINT32 = 0xFFFF_FFFF
_UINT64 = 0xFFFF_FFFF_FFFF_FFFF
_N = 624  # Mersenne Twister state words
_LEGACY_STATE = struct.Struct("<QiiQ624Qdddi4x")  # CPUGeneratorImplStateLegacy (normal_x, normal_y, rho, valid)
_STATE_TAIL = struct.Struct("<f?3x")  # + next_float_normal_sample and its flag: 5056 bytes
STATE_BYTES = _LEGACY_STATE.size + _STATE_TAIL.size
_SMALL_RANGE = 1 << 28  # randint draws one 32-bit word below this range, 64 bits from it (torch 2.13)
_CHUNK = 1 << 16  # elements per pass of a many-step kernel (a multiple of the normal fill's 16)
_RANDPERM_SERIAL_TAIL = 2048  # the last swaps of a randperm run as a plain loop
_SHARED = 128  # from this many elements with one set of parameters, a sampler may run vectorised
_TWO_PI_F32 = np.float32(2 * math.pi)

# mantissa bits of a uniform [0, 1) draw: 53 for float64, else 24 (measured: torch 2.13 draws half as a float,
# then rounds; so do the 16-bit floats below)
_DIGITS = {np.dtype(np.float64): 53}


class TorchGenerator:
    """One PyTorch CPU generator: the Mersenne Twister, its seed and the cached normal samples."""

    def __init__(self, seed: int):
        self.initial_seed = seed & _UINT64
        self._bits = np.random.MT19937(0)
        self._bits._legacy_seeding(self.initial_seed & _UINT32)
        self._fresh = True  # PyTorch's ``next`` is 0 until the first draw after seeding
        self.double_normal: float | None = None  # the cached r*sin of the last Box-Muller pair
        self.float_normal: float | None = None

    # raw draws -----------------------------------------------------------------------------
    def random32(self, n: int):
        """``n`` outputs of ``random()`` (uint64 array of 32-bit values)."""
        self._fresh = False
        return self._bits.random_raw(n)

    def random64(self, n: int):
        """``n`` outputs of ``random64()``: two 32-bit draws, the first one high."""
        pairs = self.random32(2 * n)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]

    def _unit(self, n: int, dtype):
        """``n`` uniform [0, 1) values: the low ``digits`` bits of one draw (64 bits for float64)."""
        digits = _DIGITS.get(dtype, 24)
        if digits == 53:  # a chunk at a time: no 16-byte-per-element temporaries
            out = np.empty(n, np.float64)
            for start in range(0, n, _CHUNK):
                bits = self.random64(min(_CHUNK, n - start)) & np.uint64((1 << 53) - 1)
                np.multiply(bits, 2.0**-53, out=out[start:start + _CHUNK])
            return out
        calc = np.float32
        bits = self.random32(n) & np.uint64((1 << digits) - 1)
        return bits.astype(calc) * calc(2.0**-digits)

    # uniform ---------------------------------------------------------------------------------
    def uniform(self, n: int, dtype, low: float = 0.0, high: float = 1.0):
        """``uniform_(low, high)``: ``u * (high - low) + low`` as one FMA, in the dtype's accumulate type;
        a value that rounds up to ``high`` is ``low`` instead (measured)."""
        dtype = np.dtype(dtype)
        u = self._unit(n, dtype)
        if low == 0.0 and high == 1.0:
            values = u.astype(dtype, copy=False)
            return np.where(values == 1, dtype.type(0), values) if _is_16_bit(dtype) else values
        low, high = dtype.type(low), dtype.type(high)
        if dtype == np.float64:
            values = _in_chunks(lambda part: fma64(part, high - low, low), u)
        else:
            span, low32 = np.float32(np.float32(high) - np.float32(low)), np.float32(low)
            values = _in_chunks(lambda part: fma32(part, span, low32), u).astype(dtype)
        return np.where(values == high, low, values)  # a draw that rounds up to ``high`` becomes ``low``

    # normal ----------------------------------------------------------------------------------
    def normal(self, n: int, dtype, mean: float = 0.0, std: float = 1.0, contiguous: bool = True):
        """``normal_(mean, std)`` over ``n`` elements: PyTorch's 16-wide Box-Muller fill for 16 or more
        contiguous elements, else the serial path that keeps one cached sample."""
        dtype = np.dtype(dtype)
        if n < 16 or not contiguous:
            return _from_double(self._normal_serial(n, mean, std), dtype)
        if dtype == np.float64:
            return self._normal_fill(n, np.float64, mean, std, self._box_muller_libm)
        if dtype == np.float32:
            return self._normal_fill(n, np.float32, mean, std, self._box_muller_avx)
        # half (measured): a float32 fill over n rounded up to whole blocks, whose last 16 end the output
        padded = -(-n // 16) * 16
        u = self._unit(padded, np.dtype(np.float32))
        values = _in_chunks(lambda part: self._box_muller_avx(part, mean, std), u)
        values[n - 16:n] = values[padded - 16:].copy()
        return values[:n].astype(dtype)

    def _normal_fill(self, n, dtype, mean, std, box_muller):
        u = self._unit(n, np.dtype(dtype))
        full = n - n % 16
        out = np.empty(n, dtype)
        out[:full] = _in_chunks(lambda part: box_muller(part, mean, std), u[:full])
        if full != n:  # PyTorch redraws a whole block of 16 for the tail and overwrites the last 16 outputs
            out[n - 16:] = box_muller(self._unit(16, np.dtype(dtype)), mean, std)
        return out

    @staticmethod
    def _blocks(u):
        blocks = u.reshape(-1, 2, 8)
        return blocks[:, 0, :], blocks[:, 1, :]

    def _box_muller_avx(self, u, mean, std):
        first, second = self._blocks(u)
        radius = np.sqrt(np.float32(-2.0) * avx_log(np.float32(1.0) - first))
        sin, cos = avx_sincos(_TWO_PI_F32 * second)
        out = np.stack([radius * cos, radius * sin], axis=1)
        if mean != 0.0 or std != 1.0:
            out = fma32(out, np.float32(std), np.float32(mean))
        return out.reshape(-1)

    def _box_muller_libm(self, u, mean, std):
        first, second = self._blocks(u)
        radius = np.sqrt(-2.0 * libm(np.log, 1.0 - first))
        theta = (2.0 * math.pi) * second
        out = np.stack([radius * np.cos(theta), radius * np.sin(theta)], axis=1)
        if mean != 0.0 or std != 1.0:
            out = fma64(out, std, mean)
        return out.reshape(-1)

    def _normal_serial(self, n, mean, std):
        """``at::normal_distribution<double>`` element by element: each Box-Muller pair returns
        ``r*cos`` and caches ``r*sin`` for the next call, in this tensor or a later one."""
        pairs = (n + 1 - (self.double_normal is not None)) // 2  # each new Box-Muller pair takes two doubles
        with self._doubles(2 * pairs) as draws:
            values, self.double_normal = torch_samplers.normal_doubles(n, draws.next, self.double_normal)
        values = np.array(values, dtype=np.float64)
        return values if mean == 0.0 and std == 1.0 else fma64(values, std, mean)

    @contextlib.contextmanager
    def _doubles(self, expected: int):
        """Double uniforms for an element-by-element sampler, drawn ahead; the generator then stands just
        after the last one used, where PyTorch's loop leaves it."""
        draws = torch_samplers.DoubleDraws(self._bits, expected)
        try:
            yield draws
        finally:
            if draws.close():
                self._fresh = False

    # integers --------------------------------------------------------------------------------
    def random_from_to(self, n: int, low: int, high: int):
        """``random_(low, high)``/randint as int64: ``draw % (high - low) + low``, modulo bias and all."""
        span = high - low
        draws = self.random32(n) if span < _SMALL_RANGE else self.random64(n)
        return ((draws % np.uint64(span)) + np.uint64(low & _UINT64)).view(np.int64)

    def random_bits(self, n: int, dtype):
        """``random_()`` with no bounds: 64-bit draws for int64/float64, 32-bit otherwise, reduced
        modulo ``max + 1`` (``2**digits + 1`` for floats, ``2`` for bool)."""
        dtype = np.dtype(dtype)
        wide = dtype in (np.dtype(np.int64), np.dtype(np.float64))
        draws = self.random64(n) if wide else self.random32(n)
        if dtype == np.bool_:
            return (draws & np.uint64(1)).astype(np.bool_)
        if dtype.kind == "f" or _is_16_bit(dtype):
            digits = {8: 53, 4: 24}.get(dtype.itemsize, 11 if dtype.kind == "f" else 8)  # bfloat16: 8
            modulus = (1 << digits) + 1
        else:
            modulus = int(np.iinfo(dtype).max) + 1
        return (draws % np.uint64(modulus)).astype(dtype)

    def randperm(self, n: int):
        """``randperm(n)``: forward Fisher-Yates, swapping ``i`` with ``i + random() % (n - i)``."""
        if n >= _UINT32 // 20:
            return self._randperm_inside_out(n)
        perm = np.arange(n, dtype=np.int64)
        if n < 2:
            return perm
        partner = np.arange(n - 1, dtype=np.int64)
        partner += (self.random32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
        _apply_swaps(perm, partner)
        return perm

    def _randperm_inside_out(self, n: int):
        perm = np.arange(n, dtype=np.int64)
        draws = self.random64(n - 1).tolist()
        for i in range(1, n):
            z = draws[i - 1] % (i + 1)
            perm[i], perm[z] = perm[z], perm[i]
        return perm

    # bernoulli, exponential ------------------------------------------------------------------
    def bernoulli_scalar(self, n: int, p: float):
        """``bernoulli_(p)``: one double uniform per element, ``u < p``."""
        return self._unit(n, np.dtype(np.float64)) < p

    def bernoulli_tensor(self, p):
        """``bernoulli_(p_tensor)``: a double uniform for float64 ``p``, a float one otherwise."""
        dtype = np.dtype(np.float64) if p.dtype == np.float64 else np.dtype(np.float32)
        return self._unit(p.size, dtype) < p.reshape(-1).astype(dtype, copy=False)

    def exponential(self, n: int, dtype, lambd: float):
        """``exponential_(lambd)``: ``-1 / lambd * log1p(-u)`` with a double uniform."""
        u = self._unit(n, np.dtype(np.float64))
        return _from_double((-1.0 / lambd) * libm(np.log1p, -u), np.dtype(dtype))

    def geometric(self, n: int, p: float):
        """``geometric_(p)``: ``ceil(log(u) / log1p(-p))`` with a double uniform."""
        return np.ceil(libm(np.log, self._unit(n, np.dtype(np.float64))) / math.log1p(-p))

    def log_normal(self, n: int, mean: float, std: float):
        """``log_normal_(mean, std)``: ``exp`` of the serial double normal (it shares the cached sample)."""
        return libm(np.exp, self._normal_serial(n, mean, std))

    def cauchy(self, n: int, median: float, sigma: float):
        """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))``, the last step fused."""
        return fma64(sigma, libm(np.tan, math.pi * (self._unit(n, np.dtype(np.float64)) - 0.5)), median)

    def poisson(self, rates):
        """``torch.poisson``: PyTorch's ``sample_poisson`` per element (Hoermann's transformed rejection
        from rate 10, Knuth's product of uniforms below), so its draws follow PyTorch's."""
        with self._doubles(2 * rates.size) as draws:
            if rates.size >= _SHARED and 10 <= rates[0] < math.inf and (rates == rates[0]).all():
                return torch_samplers.poisson_shared(float(rates[0]), rates.size, draws)
            return np.array(torch_samplers.poisson(rates, draws.next), dtype=np.float64)

    def standard_gamma(self, alphas, single: bool):
        """``torch._standard_gamma``: PyTorch's ``sample_gamma`` per element (Marsaglia and Tsang, ``alpha < 1``
        boosted), on double uniforms and the cached double normals. ``single``: the dtype is float32, whose
        kernel does its alpha arithmetic in float (the rest is double, as in the C++); clamping is the caller's."""
        with self._doubles(2 * alphas.size) as draws:
            values, self.double_normal = torch_samplers.gamma(alphas, single, draws.next, self.double_normal)
        return np.array(values, dtype=np.float64)

    def binomial(self, counts, probs, single: bool):
        """``torch.binomial``: PyTorch's ``sample_binomial`` per element (BTRS from ``count * prob >= 10``,
        inversion below, mirrored above ``prob = 0.5``) on double uniforms. ``single``: float32's kernel."""
        with self._doubles(2 * counts.size) as draws:
            if counts.size >= _SHARED and (counts == counts[0]).all() and (probs == probs[0]).all():
                values = torch_samplers.binomial_shared(float(counts[0]), float(probs[0]), counts.size, single, draws)
                if values is not None:
                    return values
            return np.array(torch_samplers.binomial(counts, probs, single, draws.next), dtype=np.float64)

    # multinomial -----------------------------------------------------------------------------
    def multinomial(self, weights, num_samples: int, replacement: bool):
        """Row-wise category draws from non-negative ``weights`` (rows, categories), checked already.

        Without replacement (or for one sample) PyTorch takes the top ``num_samples`` of
        ``weights / q`` with ``q ~ Exp(1)``; with replacement, a binary search of a double uniform
        in the row's normalised running sum, row by row."""
        rows, categories = weights.shape
        if not replacement or num_samples == 1:
            q = self.exponential(rows * categories, weights.dtype, 1.0).reshape(rows, categories)
            with np.errstate(divide="ignore", invalid="ignore"):
                keys = weights / q
            if num_samples == 1:
                return np.argmax(keys, axis=1)[:, None]
            return np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
        accumulate = np.float64 if weights.dtype == np.float64 else np.float32
        out = np.empty((rows, num_samples), np.int64)
        for row in range(rows):
            cumulative = np.cumsum(weights[row].astype(accumulate))
            cumulative /= cumulative[-1]
            cumulative[-1] = 1
            out[row] = np.searchsorted(cumulative, self._unit(num_samples, np.dtype(np.float64)), side="left")
        return out

    # state ------------------------------------------------------------------------------------
    def draws_marker(self) -> tuple:
        """A cheap value that differs after any draw (``get_state`` packs PyTorch's layout, ~100x slower)."""
        state = self._bits.state["state"]
        return int(state["pos"]), state["key"].tobytes(), self.double_normal, self.float_normal

    def get_state(self) -> bytes:
        """PyTorch's ``CPUGeneratorImplState`` bytes."""
        state = self._bits.state["state"]
        position = int(state["pos"])
        left = _N + 1 - position
        following = 0 if self._fresh else position
        normal_valid = self.double_normal is not None
        legacy = _LEGACY_STATE.pack(self.initial_seed, left, 1, following, *state["key"].tolist(), 0.0,
                                    self.double_normal if normal_valid else 0.0, 0.0, int(normal_valid))
        float_valid = self.float_normal is not None
        return legacy + _STATE_TAIL.pack(self.float_normal if float_valid else 0.0, float_valid)

    def set_state(self, payload: bytes) -> None:
        """Restore ``get_state``'s bytes; ValueError (PyTorch's message) if they are malformed."""
        if len(payload) != STATE_BYTES:
            raise ValueError(f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state "
                             f"size to be {len(payload)}")
        fields = _LEGACY_STATE.unpack_from(payload)
        seed, left, seeded, following = fields[:4]
        normal_y, normal_valid = fields[5 + _N], fields[7 + _N]
        if not seeded or not 0 < left <= _N or following > _N:
            raise ValueError("Invalid mt19937 state")
        key = np.array(fields[4:4 + _N], dtype=np.uint64).astype(np.uint32)  # PyTorch keeps the low 32 bits
        float_value, float_valid = _STATE_TAIL.unpack_from(payload, _LEGACY_STATE.size)
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": key, "pos": _N if left == 1 else _N + 1 - left}}
        self.initial_seed = seed
        self._fresh = left == 1 and following == 0
        self.double_normal = normal_y if normal_valid else None
        self.float_normal = float_value if float_valid else None


def _in_chunks(kernel, values):
    """``kernel(values)`` a chunk at a time: a kernel of many array passes then keeps its temporaries in
    cache (2-4x faster than whole-array passes for the exact FMA and float32 normal kernels)."""
    if values.size <= _CHUNK:
        return kernel(values)
    parts = [kernel(values[start:start + _CHUNK]) for start in range(0, values.size, _CHUNK)]
    return np.concatenate(parts)


def _from_double(values, dtype):
    """A double cast to ``dtype`` as C++ casts it: to half through float."""
    return (values.astype(np.float32) if _is_16_bit(dtype) else values).astype(dtype)


def _is_16_bit(dtype) -> bool:
    """half (or bfloat16): drawn and computed in float, then rounded."""
    return dtype.itemsize == 2 and dtype.kind in "fV"


def _apply_swaps(perm, partner) -> None:
    """Swap ``perm[i]`` with ``perm[partner[i]]`` for i = 0, 1, ... in order (``partner[i] >= i``).

    Consecutive swaps that touch disjoint positions commute, so they run as one fancy-indexed swap:
    a block of about sqrt(remaining) swaps is cut at the first swap whose position an earlier swap
    in the block wrote, or whose partner repeats an earlier partner."""
    count = len(partner)
    stop = max(0, count - _RANDPERM_SERIAL_TAIL)
    i = 0
    while i < stop:
        end = min(stop, i + max(32, 2 * math.isqrt(count - i)))
        targets = partner[i:end]
        cut = end - i
        landed = targets[(targets < end) & (targets > np.arange(i, end))]
        if landed.size:
            cut = int(landed.min()) - i
        order = np.argsort(targets[:cut], kind="stable")
        repeated = np.nonzero(targets[:cut][order[1:]] == targets[:cut][order[:-1]])[0]
        if repeated.size:
            cut = int(order[1:][repeated].min())
        here, there = np.arange(i, i + cut), targets[:cut]
        moved = perm[there]
        perm[there] = perm[here]
        perm[here] = moved
        i += cut
    tail = perm[i:].tolist()
    for k, j in enumerate(partner[i:].tolist()):
        j -= i
        tail[k], tail[j] = tail[j], tail[k]
    perm[i:] = tail
