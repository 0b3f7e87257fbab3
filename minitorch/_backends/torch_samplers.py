"""PyTorch's element-by-element CPU samplers (``sample_gamma``, ``sample_poisson``, ``sample_binomial`` and the
serial double normal), fast enough in Python and draw for draw the same as PyTorch's.

PyTorch runs these loops one element after another on one generator: each element takes as many double
uniforms as its rejection loop needs. The uniforms are drawn here ahead, in vectorised blocks
(``DoubleDraws``), and consumed from a Python iterator; ``close`` then rewinds the Mersenne Twister and
advances it by exactly the draws used, so the generator ends where PyTorch's does. Per-element constants
are computed on whole arrays first (with glibc's ``log``/``log1p``; nothing is fused: these samplers live in
Distributions.cpp, compiled without FMA); what remains per draw is plain float arithmetic and ``math`` calls
(glibc's functions). With one parameter set for every element, BTRS, PTRS and the binomial inversion run
vectorised (``binomial_shared``, ``poisson_shared``), still draw for draw.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import operator

import numpy as np

from .exact_float import libm

_F32 = np.float32
_BLOCK = 1 << 16  # most doubles drawn ahead at once
_AHEAD = 256  # from this many expected draws, draw ahead (saving and restoring the state costs ~0.2 ms)
_LOW_53 = np.uint64((1 << 21) - 1)  # the high word's bits that a 53-bit double uniform keeps
_TWO_PI = 2.0 * math.pi
_F32_EXACT_INTS = float(1 << 24)  # below this, integers and their sums stay exact in float32
_INF = math.inf
_INT64 = 2.0**63  # sample_poisson returns an int64_t (measured: its tests see the double before the cast)

# the float literals of PyTorch's sample_gamma, as the doubles they become there
_THIRD = float(_F32(1.0) / _F32(3.0))
_F32_0_0331 = float(_F32(0.0331))

# binomial's Stirling-series tail log(k!) - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2, tabulated to k = 9
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _glibc_lgamma():
    """The C library's ``lgamma`` (glibc's: PyTorch's ``std::lgamma``), found among the symbols the Python
    process has loaded; CPython's own differs in the last bit on half the integers. Without one, CPython's."""
    try:
        function = ctypes.CDLL(None).lgamma
    except (OSError, AttributeError, TypeError):
        return math.lgamma
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    return function


_lgamma = _glibc_lgamma()


class DoubleDraws:
    """Double uniforms (the low 53 bits of ``random64()``, times 2**-53) handed out one at a time by ``next``
    or as arrays by ``block``; ``close`` leaves the bit generator just after the last double used.

    From ``_AHEAD`` expected draws they are drawn ahead in blocks, which needs the bit generator's state
    saved and restored (~0.2 ms); fewer are drawn one by one (~1 us each), with nothing to undo."""

    def __init__(self, bits, expected: int):
        self._bits = bits
        self._drawn = 0
        self._used = None
        self._block = iter(())
        self._start = None
        if expected >= _AHEAD:
            self._start = bits.state
            # a chain of list iterators: each draw is two C-level calls, no Python frame
            self.next = itertools.chain.from_iterable(self._blocks(min(expected, _BLOCK))).__next__
        else:
            self.next = self._one

    def _one(self) -> float:
        self._drawn += 1
        high = self._bits.random_raw()
        return (((high & 0x1F_FFFF) << 32) | self._bits.random_raw()) * 2.0**-53

    def _blocks(self, size: int):
        while True:
            self._block = iter(self.block(size).tolist())
            yield self._block
            size = min(2 * size, _BLOCK)

    def block(self, size: int):
        """The next ``size`` doubles as an array (for a vectorised sampler, which then says how many it used)."""
        if self._start is None:
            if self._drawn:
                raise RuntimeError("DoubleDraws.block after draws that cannot be undone")
            self._start = self._bits.state
        raw = self._bits.random_raw(2 * size)
        self._drawn += size
        return (((raw[0::2] & _LOW_53) << np.uint64(32)) | raw[1::2]) * 2.0**-53

    def close(self, used: int | None = None) -> int:
        """Rewind, then draw again exactly the words used (by default: the doubles ``next`` handed out);
        returns the number of doubles used."""
        if self._used is not None:  # closed already
            return self._used
        if used is None:
            used = self._drawn - operator.length_hint(self._block)
        self._used = used
        if used != self._drawn:
            self._bits.state = self._start
            words = 2 * used
            for start in range(0, words, 2 * _BLOCK):
                self._bits.random_raw(min(2 * _BLOCK, words - start))
        return used


def _columns(*arrays):
    """Per-element constants as Python lists (a loop over lists is several times faster than over arrays)."""
    return [np.broadcast_to(array, arrays[0].shape).tolist() for array in arrays]


def _log(x: float) -> float:
    """``std::log``, including ``log(0) = -inf``."""
    return math.log(x) if x > 0 else -_INF


# the serial double normal -------------------------------------------------------------------------------
def normal_doubles(n: int, draw, cached):
    """``n`` draws of ``at::normal_distribution<double>(0, 1)``: the cached ``r*sin`` first if there is one, then
    Box-Muller pairs (u1 for the angle, u2 for the radius) that return ``r*cos`` and cache ``r*sin``."""
    sqrt, log1p, sin, cos = math.sqrt, math.log1p, math.sin, math.cos
    out = []
    append = out.append
    for _ in range(n):
        if cached is None:
            u1 = draw()
            radius = sqrt(-2.0 * log1p(-draw()))
            theta = _TWO_PI * u1
            cached = radius * sin(theta)
            append(radius * cos(theta))
        else:
            append(cached)
            cached = None
    return out, cached


# gamma --------------------------------------------------------------------------------------------------
def gamma(alphas, single: bool, draw, cached):
    """``sample_gamma`` for each alpha (a float64 array): Marsaglia and Tsang, ``alpha < 1`` boosted by a
    ``u**(1/alpha)`` factor. ``single``: float32's kernel, whose alpha arithmetic is in float."""
    sqrt, log, log1p, sin, cos = math.sqrt, math.log, math.log1p, math.sin, math.cos
    out = []
    append = out.append
    for alpha, boosted, exponent, d, c in zip(*_gamma_constants(alphas, single)):
        scale = 1.0
        if boosted:
            if alpha == 0.0:
                append(0.0)
                continue
            scale = (1.0 - draw()) ** exponent
        while True:
            if cached is None:
                u1 = draw()
                radius = sqrt(-2.0 * log1p(-draw()))
                theta = _TWO_PI * u1
                cached = radius * sin(theta)
                x = radius * cos(theta)
            else:
                x, cached = cached, None
            y = 1.0 + c * x
            if y <= 0:
                continue
            v = y * y * y
            u = 1.0 - draw()
            xx = x * x
            if u < 1.0 - _F32_0_0331 * xx * xx or log(u) < 0.5 * xx + d * (1.0 - v + log(v)):
                append(scale * d * v)
                break
    return out, cached


def _gamma_constants(alphas, single):
    alphas = np.asarray(alphas, dtype=np.float64)
    boost = alphas < 1.0
    if single:
        a32 = alphas.astype(_F32)
        with np.errstate(divide="ignore", over="ignore"):
            exponents = (_F32(1.0) / a32).astype(np.float64)
        d = (np.where(boost, a32 + _F32(1.0), a32) - _F32(_THIRD)).astype(np.float64)
    else:
        with np.errstate(divide="ignore"):
            exponents = 1.0 / alphas
        d = np.where(boost, alphas + 1.0, alphas) - _THIRD
    with np.errstate(invalid="ignore", divide="ignore"):
        c = 1.0 / np.sqrt(9.0 * d)
    return _columns(alphas, boost, exponents, d, c)


# poisson ------------------------------------------------------------------------------------------------
def poisson(rates, draw):
    """``sample_poisson`` for each rate (a float64 array): Hoermann's transformed rejection (PTRS) from rate 10,
    Knuth's product of uniforms below. Nothing is fused: Distributions.cpp is compiled without FMA (measured:
    a fused ``k * loglam - lambda`` flips the rejection test for rates near 1e12)."""
    log, fabs, floor = math.log, math.fabs, math.floor
    out = []
    append = out.append
    for lam, big, loglam, b, a, log_invalpha, vr, limit in zip(*_poisson_constants(rates)):
        if big:
            while True:
                u = draw() - 0.5
                v = draw()
                us = 0.5 - fabs(u)
                k = (2 * a / us + b) * u + lam + 0.43
                if -_INF < k < _INF:
                    k = floor(k)
                if us >= 0.07 and v <= vr:
                    break
                if k < 0 or (us < 0.013 and v > us):
                    continue
                lhs = _log(v) + log_invalpha - log(a / (us * us) + b)
                rhs = -lam + k * loglam - _lgamma(k + 1.0)
                if lhs <= rhs:
                    break
            append(k if -_INT64 <= k < _INT64 else -_INT64)  # the int64_t result: INT64_MIN out of range
        elif lam == 0:
            append(0)
        else:
            k, product = 0, 1.0
            while True:
                product *= draw()
                if not product > limit:
                    break
                k += 1
            append(k)
    return out


def poisson_shared(lam: float, n: int, draws):
    """``n`` draws of ``poisson`` with one rate of at least 10, vectorised exactly: PTRS takes its uniforms in
    pairs and accepts or rejects each pair on its own, so the samples are the accepted pairs' ``k`` in order."""
    _, _, loglam, b, a, log_invalpha, vr, _ = (column[0] for column in _poisson_constants(np.array([lam])))
    found, used, pairs = [], 0, min(max(2 * n, 64), _BLOCK // 2)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        while n > 0:
            uniforms = draws.block(2 * pairs)
            u, v = uniforms[0::2] - 0.5, uniforms[1::2]
            us = 0.5 - np.abs(u)
            k = np.floor((2 * a / us + b) * u + lam + 0.43)
            accept = (us >= 0.07) & (v <= vr)
            check = ~accept & ~((k < 0) | ((us < 0.013) & (v > us)))
            if check.any():
                kc, usc = k[check], us[check]
                lhs = libm(np.log, v[check]) + log_invalpha - libm(np.log, a / (usc * usc) + b)
                log_factorial = np.array([_lgamma(value + 1.0) for value in kc.tolist()])
                accept[check] = lhs <= -lam + kc * loglam - log_factorial
            hits = np.flatnonzero(accept)[:n]
            found.append(k[hits])
            n -= hits.size
            used += 2 * (hits[-1] + 1 if n == 0 else pairs)
            pairs = min(2 * pairs, _BLOCK // 2)
    draws.close(int(used))
    k = np.concatenate(found)
    return np.where((k >= -_INT64) & (k < _INT64), k, -_INT64)  # the int64_t result: INT64_MIN out of range


def _poisson_constants(rates):
    rates = np.asarray(rates, dtype=np.float64)
    large = rates >= 10
    with np.errstate(invalid="ignore", divide="ignore"):
        slam = np.sqrt(rates)
        loglam = libm(np.log, rates)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        log_invalpha = libm(np.log, 1.1239 + 1.1328 / (b - 3.4))
        vr = 0.9277 - 3.6224 / (b - 2)
        limit = libm(np.exp, -rates)
    return _columns(rates, large, loglam, b, a, log_invalpha, vr, limit)


# binomial -----------------------------------------------------------------------------------------------
def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _to_f32(x: float) -> float:
    return float(_F32(x))


def binomial(counts, probs, single: bool, draw):
    """``sample_binomial`` for each (count, prob) (float64 arrays holding the dtype's values): BTRS (Hoermann's
    transformed rejection with squeeze) where ``count * prob >= 10``, the geometric-sum inversion below, on
    ``1 - prob`` and mirrored when ``prob > 0.5``. ``single``: float32's kernel, whose ``scalar_t`` steps
    (``count * prob``, ``log1p(-prob)``, the candidate ``k``, ...) are float; the rest is double."""
    log, fabs, floor, ceil, tail = math.log, math.fabs, math.floor, math.ceil, _stirling_tail
    out = []
    append = out.append
    for (count, prob, mirror, exact, mean, logq, b, a, center, vr, alpha, ratio, mode_term, rest_mode,
         tail_mode, tail_rest_mode) in zip(*_binomial_constants(counts, probs, single)):
        if count <= 0.0 or prob <= 0.0:
            append(0.0)
            continue
        if prob >= 1.0:
            append(count)
            continue
        if prob != prob or count != count:  # a NaN count: PyTorch's inversion never ends
            append(math.nan)
            continue
        if mean >= 10.0:  # BTRS
            while True:
                u = draw() - 0.5
                v = draw()
                us = 0.5 - fabs(u)
                k = (2 * a / us + b) * u + center
                if -_INF < k < _INF:  # an infinite count gives an infinite or NaN k, kept as C's floor keeps it
                    k = float(floor(k))
                    if not exact and fabs(k) >= _F32_EXACT_INTS:
                        k = _to_f32(k)  # scalar_t k
                if k < 0 or k > count:
                    continue
                if us >= 0.07 and v <= vr:
                    break
                v = _log(v * alpha / (a / (us * us) + b))
                if exact:
                    count_p1, rest_p1, k_p1, rest = count + 1, count - k + 1, k + 1, count - k
                else:  # float sums that round
                    rest = _to_f32(count - k)
                    count_p1, rest_p1, k_p1 = _to_f32(count + 1), _to_f32(rest + 1), _to_f32(k + 1)
                bound = (mode_term + count_p1 * log(rest_mode / rest_p1) + (k + 0.5) * log(ratio * rest_p1 / k_p1)
                         + tail_mode + tail_rest_mode - tail(k) - tail(rest))
                if v <= bound:
                    break
        else:  # inversion: the number of geometric gaps ceil(log(U) / log1p(-q)) whose sum stays within count
            total, k = 0.0, 0.0
            while True:
                u = draw()
                total += ceil(log(u) / logq) if u > 0 else _INF
                if total > count:
                    break
                k += 1.0
        if mirror:
            k = count - k if exact else _to_f32(count - k)
        append(k)
    return out


def binomial_shared(count: float, prob: float, n: int, single: bool, draws):
    """``n`` draws of ``binomial`` with one (count, prob), vectorised exactly, or None (nothing drawn) where
    the per-element loop must run. BTRS takes its uniforms in pairs, each pair accepted or not on its own:
    the samples are the accepted pairs' ``k`` in order. The inversion's geometric gaps are whole numbers, so
    an element's running sum is a difference of one cumulative sum (exact below 2**53): each element ends
    at a ``searchsorted`` of that sum."""
    constants = [column[0] for column in _binomial_constants(np.array([count]), np.array([prob]), single)]
    (count, prob, mirror, exact, mean, logq, b, a, center, vr, alpha, ratio, mode_term, rest_mode, tail_mode,
     tail_rest_mode) = constants
    if not (0.0 < prob < 1.0 and 0.0 < count < _INF):
        return None
    if mean >= 10.0:
        k, used = _btrs_pairs(n, count, exact, b, a, center, vr, alpha, ratio, mode_term, rest_mode, tail_mode,
                              tail_rest_mode, draws)
    else:
        if 40.0 / -logq * _BLOCK + count >= 2.0**52:
            return None
        k, used = _inversion_sums(n, count, logq, draws)
    draws.close(used)
    if mirror:
        k = count - k if exact else (count - k).astype(_F32).astype(np.float64)
    return k


def _btrs_pairs(n, count, exact, b, a, center, vr, alpha, ratio, mode_term, rest_mode, tail_mode, tail_rest_mode,
                draws):
    found, used, pairs = [], 0, min(max(2 * n, 64), _BLOCK // 2)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        while n > 0:
            uniforms = draws.block(2 * pairs)
            u, v = uniforms[0::2] - 0.5, uniforms[1::2]
            us = 0.5 - np.abs(u)
            k = np.floor((2 * a / us + b) * u + center)
            if not exact:
                k = np.where(np.abs(k) >= _F32_EXACT_INTS, k.astype(_F32).astype(np.float64), k)
            accept = (k >= 0) & (k <= count)
            check = accept & ~((us >= 0.07) & (v <= vr))
            if check.any():
                kc, vc, usc = k[check], v[check], us[check]
                vc = libm(np.log, vc * alpha / (a / (usc * usc) + b))
                rest = count - kc
                if exact:
                    count_p1, rest_p1, k_p1 = count + 1, count - kc + 1, kc + 1
                else:
                    rest = rest.astype(_F32).astype(np.float64)
                    count_p1 = float(_F32(count + 1))
                    rest_p1, k_p1 = (rest + 1).astype(_F32).astype(np.float64), (kc + 1).astype(_F32).astype(np.float64)
                bound = (mode_term + count_p1 * libm(np.log, rest_mode / rest_p1)
                         + (kc + 0.5) * libm(np.log, ratio * rest_p1 / k_p1)
                         + tail_mode + tail_rest_mode - _stirling_tails(kc) - _stirling_tails(rest))
                accept[check] = vc <= bound
            hits = np.flatnonzero(accept)[:n]
            found.append(k[hits])
            n -= hits.size
            used += 2 * (hits[-1] + 1 if n == 0 else pairs)
            pairs = min(2 * pairs, _BLOCK // 2)
    return np.concatenate(found), int(used)


def _inversion_sums(n, count, logq, draws):
    target = math.floor(count) + 1.0  # a whole-number sum exceeds count when it reaches floor(count) + 1
    out = np.empty(n)
    done, used, size = 0, 0, min(max(4 * n, 64), _BLOCK)
    carry = np.empty(0)
    with np.errstate(divide="ignore"):
        while done < n:
            uniforms = np.concatenate([carry, draws.block(size)])
            gaps = np.ceil(libm(np.log, uniforms) / logq)
            infinite = np.flatnonzero(gaps == _INF)  # a zero uniform ends its element: sum no further
            last = int(infinite[0]) + 1 if infinite.size else gaps.size
            sums = np.cumsum(gaps[:last])
            before = np.concatenate([[0.0], sums[:-1]])
            ends = np.searchsorted(sums, before + target, side="left").tolist()
            start = 0
            while done < n:
                end = ends[start]
                if end >= last:  # this element's gaps run past the block
                    break
                out[done] = end - start
                done += 1
                start = end + 1
                if start >= last:
                    break
            used += start
            carry = uniforms[start:]
            size = min(2 * size, _BLOCK)
    return out, used


def _binomial_constants(counts, probs, single):
    """Per-element constants; ``exact``: the dtype's sums of whole numbers below ``count + 2`` are exact."""
    counts = np.asarray(counts, dtype=np.float64)
    probs = np.asarray(probs, dtype=np.float64)
    mirrored = probs > 0.5
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if single:
            c32, p32 = counts.astype(_F32), probs.astype(_F32)
            q32 = np.where(mirrored, (1.0 - p32.astype(np.float64)).astype(_F32), p32)
            mean = (c32 * q32).astype(np.float64)
            stddev = np.sqrt(c32 * q32 * (_F32(1) - q32)).astype(np.float64)
            mode = np.floor((c32 + _F32(1)) * q32).astype(np.float64)
            ratio = (q32 / (_F32(1) - q32)).astype(np.float64)
            logq = np.log1p(-q32[::-1])[::-1].astype(np.float64)  # glibc's log1pf (the strided loop)
            q = q32.astype(np.float64)
            exact = (counts % 1.0 == 0.0) & (counts < _F32_EXACT_INTS)
        else:
            q = np.where(mirrored, 1.0 - probs, probs)
            mean = counts * q
            stddev = np.sqrt(counts * q * (1 - q))
            mode = np.floor((counts + 1) * q)
            ratio = q / (1 - q)
            logq = libm(np.log1p, -q)
            exact = np.ones(counts.shape, dtype=bool)
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * q
        center = mean + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * stddev
        rest_mode = counts - mode + 1
        mode_term = (mode + 0.5) * libm(np.log, (mode + 1) / (ratio * rest_mode))
        tail_mode, tail_rest_mode = _stirling_tails(mode), _stirling_tails(counts - mode)
    return _columns(counts, probs, mirrored, exact, mean, logq, b, a, center, vr, alpha, ratio, mode_term,
                    rest_mode, tail_mode, tail_rest_mode)


def _stirling_tails(k):
    """``_stirling_tail`` of an array (the same operations in the same order)."""
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    table = np.array(_STIRLING_TAIL)[np.clip(np.nan_to_num(k), 0, 9).astype(np.int64)]
    return np.where(k <= 9, table, series)
