"""Special functions on arrays: lgamma, digamma, polygamma (Hurwitz zeta), i0, i1.

numpy has none of them and minitorch does not depend on scipy. Each function takes the array module
``xp`` (numpy or CuPy) and a float64 array, so it runs wherever the backend runs; float32 callers
compute in float64 and round once. The series coefficients were computed with mpmath (40 digits):

- lgamma: Stirling's series for x >= 10; the Taylor series of lgamma(2 + z) for |z| <= 0.5 (so the
  roots at 1 and 2 keep their relative accuracy; 1 + z goes through log1p); the recurrence in between;
  reflection for x < 0 (sin(pi x) from the fractional part, exact).
- digamma: the asymptotic series for x >= 10, downward recurrence to [1, 2), where a Taylor series
  about the positive root x0 = 1.46163... keeps the relative accuracy; psi(x) = psi(x + 1) - 1/x below
  1; reflection below 0. Poles as PyTorch: -inf at +0, +inf at -0, NaN at negative integers.
- polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta by Euler-Maclaurin summation after
  shifting the argument to >= 10 + n; for n = 1 and x < 0.5 the reflection formula; for n >= 2 and x < 0
  the series itself up to the first positive term (as PyTorch), 256 terms per array operation.
- i0, i1: the power series (all terms positive) for |x| <= 30, Hankel's asymptotic series above.
"""

from __future__ import annotations

import math
from fractions import Fraction

_INF, _NAN = math.inf, math.nan
_CHUNK = 256
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)

# Bernoulli numbers B2, B4, ..., B24
_BERNOULLI = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798),
              Fraction(-174611, 330), Fraction(854513, 138), Fraction(-236364091, 2730))
# lgamma(x) ~ (x - 1/2) log x - x + log(2 pi) / 2 + sum B_2k / (2k (2k - 1) x^(2k - 1))
_STIRLING = tuple(float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_BERNOULLI[:8], 1))
# digamma(x) ~ log x - 1 / (2x) - sum B_2k / (2k x^2k)
_PSI_ASYMPTOTIC = tuple(float(b / (2 * k)) for k, b in enumerate(_BERNOULLI[:8], 1))

# lgamma(2 + z) = (1 - gamma) z + sum_{k >= 2} (-1)^k (zeta(k) - 1) / k z^k, for |z| <= 0.5
_LGAMMA_2 = (
    0.0, 0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
    -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
    -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05,
    -9.439488275268397e-06, 4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
    -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
    -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09,
    -1.1921401405860912e-09, 5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
    -6.4229645638381e-11, 3.1044247747322276e-11, -1.5021384080754142e-11, 7.275974480239079e-12,
    -3.527742476575915e-12, 1.711991790559618e-12, -8.315385841420285e-13,
)

# digamma's positive root, as a sum of two doubles, and digamma's Taylor series about it (|z| <= 0.54)
_PSI_ROOT_HI, _PSI_ROOT_LO = 1.4616321449683622, 9.549995429965697e-17
_PSI_ROOT_SERIES = (
    0.0, 0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652, 0.10782405069126237,
    -0.07219956125645471, 0.04880428816414311, -0.03316112647484736, 0.022597648232218104, -0.01542476590494896,
    0.010538791616612175, -0.007204534386356869, 0.004926781395729853, -0.003369801655439328,
    0.002305126326734928, -0.0015769367714301972, 0.0010788252019162967, -0.0007380709389960052,
    0.000504953265834602, -0.0003454680251063077, 0.00023635601564027053, -0.00016170622091974803,
    0.0001106337276874741, -7.569179582195066e-05, 5.178575795222081e-05, -3.5430070947659604e-05,
    2.424006611860132e-05, -1.6584242271854135e-05, 1.134638458466385e-05, -7.762817668462094e-06,
    5.3110609208898636e-06, -3.6336507898010456e-06, 2.486022733129538e-06, -1.7008538854332607e-06,
    1.1636675363548843e-06, -7.96142543124197e-07, 5.446941930669446e-07, -3.7266161283438227e-07,
    2.549626552021554e-07, -1.7443695117727745e-07, 1.1934394829830244e-07, -8.165115189488409e-08,
    5.586299683532171e-08, -3.821960061917494e-08,
)

# I_nu(x) ~ e^x / sqrt(2 pi x) * sum_k (-1)^k a_k(nu) / x^k, a_k = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (8j)
_BESSEL_TERMS = 30
_BESSEL_SERIES_MAX = 30.0


def _hankel(nu: int) -> tuple:
    terms, a = [1.0], 1.0
    for j in range(1, _BESSEL_TERMS):
        a *= -(4 * nu * nu - (2 * j - 1) ** 2) / (8 * j)
        terms.append(a)
    return tuple(terms)


_HANKEL_0, _HANKEL_1 = _hankel(0), _hankel(1)
# power series in (x / 2)^2: I0 = sum t^k / k!^2, I1 = x / 2 * sum t^k / (k! (k + 1)!)
_I0_SERIES = tuple(1.0 / math.factorial(k) ** 2 for k in range(90))
_I1_SERIES = tuple(1.0 / (math.factorial(k) * math.factorial(k + 1)) for k in range(90))


def horner(xp, coefficients, t):
    """sum c_k t^k, coefficients from the constant term up."""
    result = xp.full_like(t, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        result = result * t + c
    return result


def _sin_pi(xp, x):
    """sin(pi x) for finite x, from the exact reduction x - round(x), so it is 0 exactly at integers."""
    n = xp.rint(x)
    r = x - n
    sign = xp.where(xp.fmod(n, 2) == 0, 1.0, -1.0)
    return sign * xp.sin(math.pi * r)


def _lgamma_positive(xp, x):
    """lgamma for x > 0 (x may hold other values: their results are discarded by the caller)."""
    x = xp.where(x > 0, x, 1.0)
    x = xp.where(xp.isfinite(x), x, 1e300)  # inf is handled by the caller
    out = xp.empty_like(x)
    big = x >= 10
    xb = xp.where(big, x, 10.0)
    inverse = 1.0 / xb
    tail = inverse * horner(xp, _STIRLING, inverse * inverse)
    out = xp.where(big, (xb - 0.5) * xp.log(xb) - xb + _HALF_LOG_2PI + tail, out)
    # 0 < x < 10: shift into [1.5, 2.5) and add the logs of the factors (a product of <= 8 terms)
    small = ~big
    xs = xp.where(small, x, 2.0)
    below = xs < 1.5
    # x < 1.5: lgamma(x) = lgamma(2 + z) - log1p(z) - [x < 0.5] log(x), z = x - 1 (or x for x < 0.5)
    tiny = xs < 0.5
    z_low = xp.where(tiny, xs, xs - 1.0)
    low = horner(xp, _LGAMMA_2, z_low) - xp.log1p(z_low) - xp.where(tiny, xp.log(xs), 0.0)
    # x >= 1.5: lgamma(x) = lgamma(2 + z) + log((2 + z)(3 + z)...(x - 1)), z in [-0.5, 0.5)
    steps = xp.floor(xs - 1.5)
    z_high = xs - 2.0 - steps
    product = xp.ones_like(xs)
    for j in range(8):
        product = xp.where(j < steps, product * (xs - 1.0 - j), product)
    high = horner(xp, _LGAMMA_2, z_high) + xp.log(product)
    return xp.where(big, out, xp.where(below, low, high))


def lgamma(xp, x):
    """log |Gamma(x)|; inf at the poles (0 and negative integers) and at +-inf."""
    positive = _lgamma_positive(xp, x)
    # x < 0: log(pi / |sin(pi x)|) - lgamma(1 - x)
    reflected = _LOG_PI - xp.log(xp.abs(_sin_pi(xp, xp.where(xp.isfinite(x), x, 0.5)))) - _lgamma_positive(xp, 1.0 - x)
    pole = (x <= 0) & (x == xp.floor(x))
    out = xp.where(x > 0, positive, reflected)
    out = xp.where(pole | xp.isinf(x), _INF, out)
    return xp.where(xp.isnan(x), x, out)


def _digamma_positive(xp, x):
    """digamma for x >= 1 (other entries: garbage the caller discards)."""
    x = xp.where(x >= 1, x, 1.5)
    x = xp.where(xp.isfinite(x), x, 1e300)
    big = x >= 10
    xb = xp.where(big, x, 10.0)
    inverse_square = 1.0 / (xb * xb)
    asymptotic = xp.log(xb) - 0.5 / xb - inverse_square * horner(xp, _PSI_ASYMPTOTIC, inverse_square)
    # 1 <= x < 10: psi(x) = psi(x - n) + sum 1/(x - j), x - n in [1, 2), where the root series applies
    xs = xp.where(big, 1.5, x)
    steps = xp.floor(xs - 1.0)
    reduced = xs - steps
    total = xp.zeros_like(xs)
    for j in range(1, 10):
        total = xp.where(j <= steps, total + 1.0 / (xs - j), total)
    z = (reduced - _PSI_ROOT_HI) - _PSI_ROOT_LO
    small = horner(xp, _PSI_ROOT_SERIES, z) + total
    return xp.where(big, asymptotic, small)


def digamma(xp, x):
    """psi(x) = Gamma'(x) / Gamma(x); poles as PyTorch (-inf at +0, inf at -0, NaN at negative integers, -inf)."""
    finite = xp.isfinite(x)
    safe = xp.where(finite & (x != 0), x, 1.0)
    below_one = (safe > 0) & (safe < 1)
    # x in (0, 1): psi(x) = psi(x + 1) - 1/x; x < 0: psi(x) = psi(1 - x) - pi / tan(pi x)
    argument = xp.where(safe >= 1, safe, xp.where(below_one, safe + 1.0, 1.0 - safe))
    base = _digamma_positive(xp, argument)
    fraction = safe - xp.rint(safe)  # tan has period pi: tan(pi x) = tan(pi (x - round(x)))
    negative = base - math.pi / xp.tan(math.pi * xp.where(fraction == 0, 0.5, fraction))
    out = xp.where(safe >= 1, base, xp.where(below_one, base - 1.0 / xp.where(below_one, safe, 1.0), negative))
    out = xp.where((x < 0) & (fraction == 0), _NAN, out)
    out = xp.where(x == 0, xp.copysign(_INF, -x), out)
    out = xp.where(x == _INF, _INF, xp.where(x == -_INF, _NAN, out))
    return xp.where(xp.isnan(x), x, out)


def hurwitz_zeta(xp, s: int, q):
    """zeta(s, q) = sum_{k >= 0} (q + k)^-s for an integer s >= 2 and q > 0 (Euler-Maclaurin)."""
    shift = 10 + s
    q = xp.where(q > 0, q, 1.0)
    total = xp.zeros_like(q)
    low = xp.minimum(q, shift)
    count = int(math.ceil(shift - float(low.min()))) if low.size else 0
    a = q.copy()
    for _ in range(count):  # every element adds the terms below ``shift``; those above add nothing
        active = a < shift
        total = xp.where(active, total + a**-s, total)
        a = xp.where(active, a + 1.0, a)
    power = a**-s
    total = total + a ** (1 - s) / (s - 1) + 0.5 * power  # (not a * power: a^-s underflows first)
    factor = float(s)  # s (s + 1) ... (s + 2k - 2)
    term = power / a
    for k, b in enumerate(_BERNOULLI, 1):
        total = total + float(b) / math.factorial(2 * k) * factor * term
        factor *= (s + 2 * k - 1) * (s + 2 * k)
        term = term / (a * a)
    return total


def polygamma(xp, n: int, x):
    """The n-th derivative of digamma, n >= 1: (-1)^(n+1) n! zeta(n + 1, x); +-inf at the poles."""
    scale = (1.0 if n % 2 else -1.0) * math.factorial(n)
    pole = (x <= 0) & (x == xp.floor(x))
    positive = scale * hurwitz_zeta(xp, n + 1, xp.where(x > 0, x, 1.0))
    if n == 1:  # reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
        sine = _sin_pi(xp, xp.where(xp.isfinite(x) & (x < 0.5), x, 0.5))
        low = x < 0.5
        negative = math.pi**2 / (sine * sine) - hurwitz_zeta(xp, 2, xp.where(low, 1.0 - x, 1.0))
        out = xp.where(low, negative, positive)
    else:  # x < 0: the series itself, summed up to the first positive term, then Euler-Maclaurin
        shift = xp.where((x > 0) | ~xp.isfinite(x), 0.0, xp.ceil(-x) + 1.0)
        total = xp.zeros_like(x)
        count = int(float(shift.max())) if shift.size else 0
        for start in range(0, count, _CHUNK):  # _CHUNK terms per array operation
            k = xp.arange(start, min(start + _CHUNK, count), dtype=x.dtype)
            terms = (x[..., None] + k) ** -(n + 1)
            total = total + xp.where(k < shift[..., None], terms, 0.0).sum(axis=-1)
        negative = scale * (total + hurwitz_zeta(xp, n + 1, xp.where(x > 0, 1.0, x + shift)))
        out = xp.where(x > 0, positive, negative)
    out = xp.where(pole, _INF if n % 2 else -_INF, out)
    out = xp.where(x == _INF, 0.0 if n == 1 else _NAN, out)
    return xp.where(xp.isnan(x) | (x == -_INF), _NAN, out)


def _bessel(xp, x, series, hankel, odd: bool):
    ax = xp.abs(x)
    small = ax <= _BESSEL_SERIES_MAX
    xs = xp.where(small, ax, 0.0)
    t = 0.25 * xs * xs
    near = horner(xp, series, t)
    if odd:
        near = near * (0.5 * xs)
    xl = xp.where(small, _BESSEL_SERIES_MAX, ax)
    half = xp.exp(0.5 * xl)  # e^x = half * half: finite up to the result's own overflow
    far = half * (half * horner(xp, hankel, 1.0 / xl) / xp.sqrt(2 * math.pi * xl))
    out = xp.where(small, near, far)
    if odd:
        out = xp.copysign(out, x)
    return xp.where(xp.isnan(x), x, out)


def i0(xp, x):
    """The modified Bessel function of the first kind, order 0 (even; inf for |x| >= 713.99)."""
    return _bessel(xp, x, _I0_SERIES, _HANKEL_0, False)


def i1(xp, x):
    """Order 1 (odd)."""
    return _bessel(xp, x, _I1_SERIES, _HANKEL_1, True)
