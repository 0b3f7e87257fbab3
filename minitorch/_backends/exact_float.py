"""Floating-point steps that PyTorch's CPU random kernels compute one way and numpy another.

PyTorch's kernels are compiled by GCC with FMA contraction on, so ``u * range + from`` and
``n * std + mean`` are single fused multiply-adds, and its float32 normals use the Cephes-style
``log``/``sincos`` polynomials of ``avx_mathfun.h`` (AVX2), again with fused steps. numpy has no fused
multiply-add, so it is emulated here, correctly rounded, on whole arrays:

- float32: the product of two float32 values is exact in float64, so ``a*b + c`` in float64 is off
  only where its one rounding lands on a float32 rounding midpoint; those rare elements are redone
  with a round-to-odd sum (Boldo and Melquiond, 2008), which then rounds to float32 correctly.
- float64: Dekker's exact product, an exact sum, and a round-to-odd add of the two error terms.
"""

from __future__ import annotations

import numpy as np

_F32 = np.float32
_MIDPOINT_MASK = np.uint64((1 << 29) - 1)  # float64 bits below float32's last mantissa bit
_MIDPOINT = np.uint64(1 << 28)


def _round_odd_sum(x, y):
    """``x + y`` rounded to odd in float64: a truncated sum whose last bit is set when inexact."""
    s = x + y
    bb = s - x
    err = (x - (s - bb)) + (y - bb)
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0)
    if fix.any():
        step = np.where((err > 0) == (s > 0), 1, -1)
        bits = np.where(fix, bits + step, bits)
    return bits.view(np.float64)


def fma32(a, b, c):
    """Correctly rounded float32 ``a * b + c`` (arrays or scalars of float32 values)."""
    s = np.multiply(a, b, dtype=np.float64)
    np.add(s, c, out=s, dtype=np.float64)
    bits = np.bitwise_and(s.view(np.uint64), _MIDPOINT_MASK)
    if (bits == _MIDPOINT).any():
        where = np.nonzero(bits == _MIDPOINT)
        shape = s.shape
        product = np.multiply(np.broadcast_to(a, shape)[where], np.broadcast_to(b, shape)[where], dtype=np.float64)
        s[where] = _round_odd_sum(product, np.broadcast_to(c, shape)[where].astype(np.float64))
    return s.astype(_F32)


def _split(x):
    t = 134217729.0 * x  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    high = t - (t - x)
    return high, x - high


def fma64(a, b, c):
    """Correctly rounded float64 ``a * b + c`` (finite arguments, no overflow)."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    product = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    product_err = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    high = c + product
    bb = high - c
    low = (c - (high - bb)) + (product - bb)
    return high + _round_odd_sum(np.asarray(low), np.asarray(product_err))


def libm(ufunc, x):
    """A float64 ufunc as glibc computes it: numpy's contiguous SIMD kernels (log, log1p, exp, ...) differ
    from glibc in the last bit on some inputs (log: about 0.3%); on a negative-stride view numpy calls libm."""
    x = np.asarray(x, dtype=np.float64)
    return ufunc(x.reshape(-1)[::-1])[::-1].reshape(x.shape)


# avx_mathfun.h (Cephes in float32, as GCC compiles it with FMA contraction) -------------------

_LOG_POLY = [_F32(v) for v in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                                1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                                3.3333331174e-1)]
_LOG_Q1, _LOG_Q2 = _F32(-2.12194440e-4), _F32(0.693359375)
_SQRTHF = _F32(0.707106781186547524)
_FOPI = _F32(1.27323954473516)  # 4 / pi
_MINUS_DP = [_F32(v) for v in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]
_SIN_POLY = [_F32(v) for v in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_COS_POLY = [_F32(v) for v in (2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002)]
_ONE, _HALF = _F32(1.0), _F32(0.5)


def _horner(coefficients, x):
    y = fma32(coefficients[0], x, coefficients[1])
    for coefficient in coefficients[2:]:
        y = fma32(y, x, coefficient)
    return y


def avx_log(x):
    """``log256_ps`` for positive normal float32 ``x``."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _ONE
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)  # mantissa in [0.5, 1)
    small = m < _SQRTHF
    e = e - small.astype(_F32)
    x = (m - _ONE) + np.where(small, m, _F32(0))
    z = x * x
    y = _horner(_LOG_POLY, x) * x
    y = fma32(y, z, e * _LOG_Q1)  # GCC fuses y*z into the add of the rounded e*q1
    y = y - z * _HALF
    return (x + y) + e * _LOG_Q2


def avx_sincos(x):
    """``sincos256_ps`` for non-negative float32 ``x``: ``(sin, cos)``."""
    octant = (x * _FOPI).astype(np.int32)
    octant = (octant + 1) & ~1
    y = octant.astype(_F32)
    for dp in _MINUS_DP:
        x = fma32(y, dp, x)
    z = x * x
    cos_poly = _horner(_COS_POLY, z) * z
    cos_poly = fma32(cos_poly, z, -(z * _HALF)) + _ONE
    sin_poly = fma32(_horner(_SIN_POLY, z) * z, x, x)
    use_sin_poly = (octant & 2) == 0
    sin = np.where(use_sin_poly, sin_poly, cos_poly)
    cos = np.where(use_sin_poly, cos_poly, sin_poly)
    sin = np.where((octant & 4) != 0, -sin, sin)
    cos = np.where((~(octant - 2) & 4) != 0, -cos, cos)
    return sin, cos
