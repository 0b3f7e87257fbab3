"""Elementwise math: a table of unary ops (name -> kernel, derivative, what backward reads), then the
ops with parameters or several inputs (round, clamp, maximum/minimum, fmax/fmin, atan2, lerp,
logaddexp, xlogy, nan_to_num).

A kernel takes ``(xp, x)``; a derivative takes ``(grad, x, y)`` (input and output Tensors, None where
not saved) and is written in differentiable Tensor ops, so every entry supports double backward.
Integer and bool inputs of float functions are promoted to the default float dtype, as in PyTorch;
rounding ops, abs, sign, square and relu keep integer dtypes. At kinks the derivative is PyTorch's:
abs'(0) = 0, relu'(0) = 0, sqrt'(0) = inf, and zero for sign and the rounding ops; sign(NaN) = 0.
"""

from __future__ import annotations

import math

from .._backends import special
from .._backends.dtypes import FLOAT32, is_bfloat16
from .._dtype import scalar_type_name
from ..autograd.graph import saved_arrays
from ..creation import zeros_like
from ..tensor import Tensor
from . import fast_path
from .comparison import depends_on, isfinite, where
from .op import Op
from .promotion import Elementwise, array_kind, as_float, conj_if_complex, promote

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_SQRT_PI = math.sqrt(math.pi)
_SCALAR_TYPES = (bool, int, float)
_LEGACY = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_EPSILON = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def _zeros(grad: Tensor) -> Tensor:
    return zeros_like(grad)


# erf and erfinv kernels ------------------------------------------------------------------------
# numpy has no erf ufunc. This is fdlibm's s_erf.c (Sun Microsystems, 1993; also in FreeBSD and musl):
# rational approximations on [0, 0.84375), [0.84375, 1.25), [1.25, 1/0.35), [1/0.35, 28), each
# better than 1 ulp in float64 (tests/test_pointwise.py checks it against math.erf). Each element is
# evaluated in its own branch only (see _erf_erfc): about 3x faster than np.vectorize(math.erf).
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_ERX = 8.45062911510467529297e-01
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _polynomial(coefficients, t):
    """Horner's rule, coefficients from the constant term up (in place on a fresh array)."""
    result = t * coefficients[-1]
    for i in range(len(coefficients) - 2, 0, -1):
        result += coefficients[i]
        result *= t
    result += coefficients[0]
    return result


def _erf_erfc(xp, ax):
    """``(erf(ax), erfc(ax))`` for 1-D float64 ``ax >= 0`` (or NaN); erfc keeps its relative accuracy in the
    tail. Each element is evaluated in its own branch only: gathers by index (``flatnonzero``; 10x faster
    than boolean masks in numpy) instead of computing every branch everywhere."""
    if ax.size <= 32:  # fewer elements than the ~60 array calls below: the scalar libm is faster
        values = ax.tolist()
        return xp.asarray([math.erf(v) for v in values]), xp.asarray([math.erfc(v) for v in values])
    erf, erfc = xp.empty_like(ax), xp.empty_like(ax)
    below = ax < 1.25
    small = xp.flatnonzero(ax < 0.84375)
    middle = xp.flatnonzero(below & (ax >= 0.84375))
    tail = xp.flatnonzero(~below)  # ax >= 1.25, or NaN
    a = ax[small]
    z = a * a
    value = a + a * (_polynomial(_PP, z) / _polynomial(_QQ, z))
    erf[small], erfc[small] = value, 1.0 - value
    s = ax[middle] - 1.0
    ratio = _polynomial(_PA, s) / _polynomial(_QA, s)
    erf[middle], erfc[middle] = _ERX + ratio, (1.0 - _ERX) - ratio
    a = xp.minimum(ax[tail], 28.0)  # erfc(28) underflows to 0 already; NaN stays NaN
    t = 1.0 / (a * a)
    near_mask = a < 1 / 0.35
    near, far = xp.flatnonzero(near_mask), xp.flatnonzero(~near_mask)
    r_over_s = xp.empty_like(a)
    t_near, t_far = t[near], t[far]
    r_over_s[near] = _polynomial(_RA, t_near) / _polynomial(_SA, t_near)
    r_over_s[far] = _polynomial(_RB, t_far) / _polynomial(_SB, t_far)
    head = a.astype(xp.float32).astype(xp.float64)  # fdlibm's z: head * head is exact
    value = xp.exp(-head * head - 0.5625) * xp.exp((head - a) * (head + a) + r_over_s) / a
    erf[tail], erfc[tail] = 1.0 - value, value
    return erf, erfc


def _has_values(xp, x) -> bool:
    """False on the meta device, whose arrays have a shape but no values to select branches with.
    A numpy scalar has values: numpy's arithmetic on a 0-dim array returns one (``x * c``), not a 0-d array."""
    return isinstance(x, (xp.ndarray, xp.generic))


# Single precision: erf(x) = -expm1(x * R(x)) for 0 <= x <= 3.92, R a degree-9 polynomial fitted (weighted
# least squares, Lawson iterations) to log(erfc(x)) / x; above 3.92, erf rounds to 1 in float32. Evaluated in
# float64 and rounded once, it is within 0.51 ulp of float32 (tests/test_pointwise.py). No branches, so no
# gathers: about 4x faster than the fdlibm kernel, which float64 keeps for its last bits.
_LOG_ERFC_OVER_X = (-1.128379166629893, -0.636619834507023, -0.10277127780083155, 0.01911769745662768,
                    0.00025305565977477905, -0.0017993474717347198, 0.0007406814826536395,
                    -0.0001674791906467501, 2.135421880424874e-05, -1.1932660536276974e-06)
_ERF_ONE_FLOAT32 = 3.92


def _erf_single(xp, x):
    """erf of a float32 (or float16) array, to float32 accuracy; NaN stays NaN and erf(-0) = -0."""
    # no out= here: for a 0-dim x each step is a numpy scalar, which cannot be written into
    t = xp.minimum(xp.abs(x.astype(xp.float64)), _ERF_ONE_FLOAT32)  # NaN stays NaN
    q = _polynomial(_LOG_ERFC_OVER_X, t)
    q *= t  # log(erfc(|x|)), relative accuracy near 0
    q = xp.expm1(q)  # -erf(|x|)
    return xp.copysign(q, x).astype(x.dtype, copy=False)


def _erf(xp, x):
    if not _has_values(xp, x):
        return x.copy()
    if x.dtype != xp.float64:
        return _erf_single(xp, x)
    erf, _ = _erf_erfc(xp, xp.abs(x).reshape(-1))
    return xp.copysign(erf.reshape(x.shape), x)


# Giles (2010), "Approximating the erfinv function": single precision, refined below by Newton steps
_GILES_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
                  -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844,
               0.00134934322, 0.000100950558, -0.000200214257)


def _erfinv(xp, x):
    """Giles' approximation, then Newton steps: on erf for |x| < 0.5, and for |x| >= 0.5 on log(erfc), where
    1 - |x| is exact. In the tail (1 - |x| down to 1e-16, y up to 8) Giles' single-precision start is off by up
    to 3%, and plain Newton on erfc crawls there (erfc is far from linear over that gap; fuzzer seed 209388);
    log(erfc(y)) is nearly quadratic, so four steps reach full precision."""
    if not _has_values(xp, x):
        return x.copy()
    x64 = x.astype(xp.float64, copy=False)
    ax = xp.abs(x64).reshape(-1)
    w = -xp.log((1.0 - ax) * (1.0 + ax))
    y = ax * xp.where(w < 5.0, _polynomial(_GILES_CENTRAL, w - 2.5), _polynomial(_GILES_TAIL, xp.sqrt(w) - 3.0))
    complement = 1.0 - ax
    log_complement = xp.log(xp.where(complement > 0, complement, 1.0))
    for _ in range(4):
        erf, erfc = _erf_erfc(xp, y)
        slope = (2.0 / _SQRT_PI) * xp.exp(-y * y)
        log_erfc = xp.log(xp.where(erfc > 0, erfc, math.ulp(0.0)))
        y = y - xp.where(ax < 0.5, erf - ax, (log_complement - log_erfc) * erfc) / slope
    y = xp.where(ax == 1.0, math.inf, y).reshape(x.shape)
    return xp.copysign(y, x64).astype(x.dtype, copy=False)


def _in_float64(function):
    """A kernel computing ``function(xp, x)`` in float64 and rounding once to ``x``'s dtype (the special
    functions of _backends/special.py are written for float64)."""

    def kernel(xp, x):
        if not _has_values(xp, x):
            return x.copy()
        return xp.asarray(function(xp, x.astype(xp.float64))).astype(x.dtype, copy=False)

    return kernel


def _erfc(xp, x):
    """erfc(x) for x >= 0 from fdlibm's tail (relative accuracy down to 1e-308); 1 + erf(-x) below 0."""
    erf, erfc = _erf_erfc(xp, xp.abs(x).reshape(-1))
    return xp.where(x < 0, 1.0 + erf.reshape(x.shape), erfc.reshape(x.shape))


def _sinc(xp, x):
    """sin(pi x) / (pi x), 1 at 0 (as PyTorch: the product pi * x, then sin of it)."""
    product = math.pi * x
    return xp.where(x == 0, 1.0, xp.sin(product) / xp.where(x == 0, 1.0, product)).astype(x.dtype, copy=False)


def _sinc_derivative(g, x, y):
    """PyTorch's sinc_backward: (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0 (whatever g). There it is
    written as ``-pi^2 / 3 * x`` (times a finite g), so the second derivative at 0 is sinc''(0) = -pi^2 / 3
    (PyTorch's masked_fill gives nan); the other branch divides by 1 there, so no 0 * inf = nan leaks."""
    product = x * math.pi
    square = x * x * math.pi
    zero = square == 0
    at_zero = where(g.isfinite(), g, 0.0) * (x * (-math.pi**2 / 3))
    return where(zero, at_zero, g * (product * product.cos() - product.sin()) / where(zero, 1.0, square))


def _i1_derivative(g, x, y):
    """PyTorch's i1_backward: i0(x) - i1(x) / x, and 1/2 where |x| <= machine epsilon (0 / 0 there)."""
    eps = _EPSILON.get(x.dtype.name, _EPSILON["float32"])
    not_tiny = x.abs() > eps
    safe = where(not_tiny, x, eps)
    return g * where(not_tiny, safe.i0() - y * safe.reciprocal(), 0.5)


# unary table -------------------------------------------------------------------------------------
def _rounding(name: str):
    """floor/ceil/trunc: integer tensors are returned as copies (numpy would make them float64)."""
    ufunc = name

    def kernel(xp, x):
        if x.dtype.kind == "c":
            raise NotImplementedError(f"{ufunc} is not supported for complex inputs")
        return getattr(xp, ufunc)(x) if array_kind(x.dtype) == "f" else x.copy()

    return kernel


def _sign(xp, x):
    """sign(NaN) is 0 in PyTorch (numpy: NaN), so abs' gradient at NaN is 0 there too."""
    if x.dtype.kind == "b":
        return x.copy()
    if x.dtype.kind == "c":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."
        )
    return xp.nan_to_num(xp.sign(x)) if array_kind(x.dtype) == "f" else xp.sign(x)  # (a 0-dim x gives a numpy scalar)


def _sgn(xp, x):
    """sign of real input; ``z / |z|`` (0 at 0) of complex input."""
    if x.dtype.kind != "c":
        return _sign(xp, x)
    magnitude = xp.abs(x)
    return xp.where(magnitude == 0, 0, x / xp.where(magnitude == 0, 1, magnitude)).astype(x.dtype, copy=False)


def _sgn_derivative(g, x, y):
    """Of complex input, PyTorch's sgn_backward: ``(g - sgn^2 conj(g)) / (2 |z|)``, 0 at 0; of real input 0."""
    if not x.dtype.is_complex:
        return _zeros(g)
    magnitude = x.abs()
    return where(magnitude == 0, 0.0, (g - y * y * g.conj()) / (2 * magnitude))


def _frac(xp, x):
    if array_kind(x.dtype) != "f":
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{scalar_type_name(x.dtype)}'")
    return x - xp.trunc(x)


def _abs(xp, x):
    if x.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return xp.abs(x)


def _relu(xp, x):
    if x.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if x.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return xp.maximum(x, 0)


def _no_grad(g, x, y):
    return _zeros(g)


# name: (kernel(xp, x) or the name of the array library's ufunc, derivative(grad, x, y), what backward reads:
# "x" input, "y" output)
UNARY = {
    "exp": ("exp", lambda g, x, y: g * y, "y"),
    "exp2": ("exp2", lambda g, x, y: g * y * _LN2, "y"),
    "expm1": ("expm1", lambda g, x, y: g * (y + 1), "y"),
    "log": ("log", lambda g, x, y: g / x, "x"),
    "log2": ("log2", lambda g, x, y: g / (x * _LN2), "x"),
    "log10": ("log10", lambda g, x, y: g / (x * _LN10), "x"),
    "log1p": ("log1p", lambda g, x, y: g / (x + 1), "x"),
    "sqrt": ("sqrt", lambda g, x, y: g / (2 * y), "y"),
    "rsqrt": (lambda xp, x: 1 / xp.sqrt(x), lambda g, x, y: -0.5 * g * y * y * y, "y"),
    "sin": ("sin", lambda g, x, y: g * x.cos(), "x"),
    "cos": ("cos", lambda g, x, y: -g * x.sin(), "x"),
    "tan": ("tan", lambda g, x, y: g * (1 + y * y), "y"),
    "asin": ("arcsin", lambda g, x, y: g * (1 - x * x).rsqrt(), "x"),
    "acos": ("arccos", lambda g, x, y: -g * (1 - x * x).rsqrt(), "x"),
    "atan": ("arctan", lambda g, x, y: g / (1 + x * x), "x"),
    "sinh": ("sinh", lambda g, x, y: g * x.cosh(), "x"),
    "cosh": ("cosh", lambda g, x, y: g * x.sinh(), "x"),
    "tanh": ("tanh", lambda g, x, y: g * (1 - y * y), "y"),
    "asinh": ("arcsinh", lambda g, x, y: g * (x * x + 1).rsqrt(), "x"),
    "acosh": ("arccosh", lambda g, x, y: g * (x * x - 1).rsqrt(), "x"),
    "atanh": ("arctanh", lambda g, x, y: g / (1 - x * x), "x"),
    # exp(-x) overflows to inf for x << 0 and 1 / inf = 0 is the right limit (warnings are off)
    "sigmoid": (lambda xp, x: 1 / (1 + xp.exp(-x)), lambda g, x, y: g * y * (1 - y), "y"),
    "reciprocal": ("reciprocal", lambda g, x, y: -g * y * y, "y"),
    "erf": (_erf, lambda g, x, y: g * (2 / _SQRT_PI) * (-x * x).exp(), "x"),
    # PyTorch saves x and computes erfinv again in backward (so writing into the output in place is allowed)
    "erfinv": (_erfinv, lambda g, x, y: g * (_SQRT_PI / 2) * x.erfinv().square().exp(), "x"),
    "erfc": (_in_float64(_erfc), lambda g, x, y: g * (-2 / _SQRT_PI) * (-x * x).exp(), "x"),
    "lgamma": (_in_float64(special.lgamma), lambda g, x, y: g * x.digamma(), "x"),
    "digamma": (_in_float64(special.digamma), lambda g, x, y: g * polygamma(1, x), "x"),
    "i0": (_in_float64(special.i0), lambda g, x, y: g * _i1(x), "x"),
    # torch.special.i1, the derivative of i0
    "i1": (_in_float64(special.i1), _i1_derivative, "xy"),
    "sinc": (_sinc, _sinc_derivative, "x"),
    "deg2rad": (lambda xp, x: x * (math.pi / 180), lambda g, x, y: g * (math.pi / 180), ""),
    "rad2deg": (lambda xp, x: x * (180 / math.pi), lambda g, x, y: g * (180 / math.pi), ""),
    "frac": (_frac, lambda g, x, y: g, ""),
    # integer in, integer out
    "square": ("square", lambda g, x, y: 2 * g * x, "x"),
    "abs": (_abs, lambda g, x, y: g * x.sgn(), "x"),  # sgn: z / |z| of complex z
    # PyTorch's threshold_backward(grad, result, 0): a NaN result passes the gradient, and under create_graph
    # the gradient depends on the result (with derivative 0), so it can be differentiated again
    "relu": (_relu, lambda g, x, y: depends_on(where(y <= 0, 0.0, g), y), "y"),
    "sign": (_sign, _no_grad, ""),
    # PyTorch's sgn_backward(self, grad, result) reads input and result (zeros for a real input): writing into them
    # before backward raises
    "sgn": (_sgn, _sgn_derivative, "xy"),
    "floor": (_rounding("floor"), _no_grad, ""),
    "ceil": (_rounding("ceil"), _no_grad, ""),
    "trunc": (_rounding("trunc"), _no_grad, ""),
}
KEEPS_DTYPE = {"frac", "square", "abs", "relu", "sign", "sgn", "floor", "ceil", "trunc"}
# Derivatives written with + - * / and Python numbers only: numpy and CuPy arrays evaluate them as Tensors
# do, so a first-order backward runs them on the raw arrays (Node.array_derivative).
ARITHMETIC_DERIVATIVES = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tan", "atan", "tanh", "atanh",
    "sigmoid", "reciprocal", "frac", "square", "deg2rad", "rad2deg",
}
PRIVATE = {"i1"}  # torch.special.i1 only: no torch.i1, no Tensor.i1
# PyTorch's node names where they are not the capitalized op name (square is pow(x, 2) in PyTorch)
NODE_NAMES = {"log1p": "Log1PBackward0", "deg2rad": "Deg2RadBackward0", "rad2deg": "Rad2DegBackward0",
              "square": "PowBackward0"}


class Unary(Elementwise):
    """Base of the table's ops; ``kernel`` and ``derivative`` come from the table entry."""

    kernel = derivative = None
    keeps_dtype = False

    complex_input = False

    def compute(self, x):
        kind = x.dtype.kind
        if kind != "f":  # (float32/float64, the common case, skip all of this)
            if kind == "c":
                self.complex_input = True
            elif is_bfloat16(x.dtype):  # PyTorch computes bfloat16 in float32, rounds once (sigmoid: 1 / (1 + exp(-x)))
                return type(self).kernel(self.xp, x.astype(FLOAT32)).astype(x.dtype)
            elif not self.keeps_dtype:
                x = as_float(self, x)
        return type(self).kernel(self.xp, x)

    def backward(self, grad):
        saved = self.saved_tensors
        x = saved[0] if self.save_inputs else None
        y = saved[-1] if self.save_output else None
        if self.complex_input and type(self) not in _NOT_HOLOMORPHIC:  # grad * conj(f'(z)) = conj(conj(grad) f'(z))
            return conj_if_complex(type(self).derivative(conj_if_complex(grad), x, y))
        return type(self).derivative(grad, x, y)

    def _evaluate_on_arrays(self, grads):
        """``backward`` on arrays, without the frames of the general call (the engine's hottest call)."""
        if self.complex_input:
            return super()._evaluate_on_arrays(grads)
        saved = saved_arrays(self)
        return (type(self).derivative(grads[0], saved[0] if self.save_inputs else None,
                                      saved[-1] if self.save_output else None),)

    def jvp(self, inputs, outputs, tangents):
        """The table's derivative, applied to the tangent: it computes ``grad * f'(x)``, and an elementwise
        function's Jacobian is diagonal, so ``J t = f'(x) t`` (also for complex ``z`` where f is holomorphic;
        abs and sgn of complex input take the general derived rule)."""
        if self.complex_input and type(self) in _NOT_HOLOMORPHIC:
            return Op.jvp(self, inputs, outputs, tangents)
        return type(self).derivative(tangents[0], inputs[0], outputs[0])


def _ufunc_kernel(ufunc: str):
    """The kernel of an op that is one ufunc of the array library."""
    return lambda xp, x: getattr(xp, ufunc)(x)


def _make(name: str):
    kernel, derivative, reads = UNARY[name]
    ufunc = kernel if type(kernel) is str else None
    if ufunc is not None:
        kernel = _ufunc_kernel(ufunc)
    attributes = {
        "kernel": staticmethod(kernel),
        "derivative": staticmethod(derivative),
        "keeps_dtype": name in KEEPS_DTYPE,
        "array_derivative": name in ARITHMETIC_DERIVATIVES,
        "save_inputs": (0,) if "x" in reads else (),
        "save_output": "y" in reads,
    }
    if name in NODE_NAMES:
        attributes["name"] = lambda self, _node=NODE_NAMES[name]: _node
    op = type(name.capitalize(), (Unary,), attributes)

    def function(input: Tensor) -> Tensor:
        return op.apply(input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {name}, differentiable (kernel and derivative: ops/pointwise.py UNARY)."
    return op, fast_path.unary(op, function, ufunc)  # the function, after the check for the common case


OPS = {}
for _name in UNARY:
    OPS[_name], globals()[_name] = _make(_name)
_NOT_HOLOMORPHIC = (OPS["abs"], OPS["sgn"])  # their derivatives are written for complex input as they stand
_i1 = globals().pop("i1")


# ops with parameters -----------------------------------------------------------------------------
class Round(Elementwise):
    """Round half to even, optionally to ``decimals`` places (PyTorch's formula: rint(x * 10^d) / 10^d)."""

    def compute(self, x, decimals=0):
        xp = self.xp
        if x.dtype.kind == "c":
            raise NotImplementedError(f"\"round_vml_cpu\" not implemented for '{scalar_type_name(x.dtype)}'")
        if array_kind(x.dtype) != "f":
            return x.copy()
        if decimals == 0:
            return xp.rint(x)
        if decimals > 0:
            scale = 10.0**decimals
            return xp.rint(x * scale) / scale
        scale = 10.0**-decimals
        return xp.rint(x / scale) * scale

    def backward(self, grad):
        return _zeros(grad)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - torch.round
    """Round half to even (``decimals`` may be negative); gradient zero."""
    return Round.apply(input, decimals=decimals)


class NanToNum(Elementwise):
    """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (default: the dtype's largest/smallest value)."""

    save_inputs = (0,)

    def compute(self, x, nan=0.0, posinf=None, neginf=None):
        if array_kind(x.dtype) != "f":
            return x.copy()
        return self.xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, grad):
        (x,) = self.saved_tensors
        return where(isfinite(x), grad, 0.0)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """Replace NaN and infinities by finite numbers; the gradient flows where the input was finite."""
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


class Clamp(Elementwise):
    """``min(max(x, min), max)``; the result dtype promotes over the bounds (int tensor, float bound -> float).

    Gradients are PyTorch's (clamp_backward, clamp_backward_min_max in derivatives.yaml): the input gets the
    gradient where ``min <= x <= max``, boundaries included; a tensor ``min`` where ``x < min`` (and ``min < max``),
    a tensor ``max`` where ``x > max`` or ``max < min``. So ``clamp(x, -1, 1)`` has derivative 1 at x = +-1, and
    when min > max every element is ``max`` and only ``max`` gets the gradient. A NaN x passes nothing to x.
    """

    save_inputs = (0, 1, 2)
    tensor_bounds = False  # PyTorch's node: ClampBackward0 for tensor bounds, ClampBackward1 for numbers
    variant = None  # clamp_min / clamp_max: PyTorch's ops of their own (ClampMinBackward0, ...)

    def name(self) -> str:
        if self.variant is not None:
            return self.variant
        return "ClampBackward0" if self.tensor_bounds else "ClampBackward1"

    def compute(self, x, lower, upper):
        xp = self.xp
        self.tensor_bounds = hasattr(lower, "shape") or hasattr(upper, "shape")
        if lower is None:
            x, upper, _ = promote(self, x, upper)
            return xp.minimum(x, upper)
        if upper is None:
            x, lower, _ = promote(self, x, lower)
            return xp.maximum(x, lower)
        x, lower, upper, _ = promote(self, x, lower, upper)
        return xp.minimum(xp.maximum(x, lower), upper)

    def backward(self, grad):
        x, lower, upper = self.saved_tensors
        grad_x = grad_lower = grad_upper = None
        if self.needs_grad(0):
            inside = x >= lower if upper is None else x <= upper if lower is None else (x >= lower) & (x <= upper)
            grad_x = where(inside, grad, 0.0)
        if self.needs_grad(1):
            below = x < lower if upper is None else (x < lower) & (lower < upper)
            grad_lower = where(below, grad, 0.0)
        if self.needs_grad(2):
            above = x > upper if lower is None else (x > upper) | (upper < lower)
            grad_upper = where(above, grad, 0.0)
        return grad_x, grad_lower, grad_upper


def clamp(input: Tensor, min=None, max=None) -> Tensor:  # noqa: A002 - torch names
    """Limit ``input`` to ``[min, max]`` (numbers or broadcasting tensors; either may be None).
    Gradient at the boundaries: see ``Clamp`` (the input's, 1 at x == min or x == max, as in PyTorch)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return Clamp.apply(input, min, max)


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002
    return _named(clamp(input, min=min), "ClampMin")


def clamp_max(input: Tensor, max) -> Tensor:  # noqa: A002
    return _named(clamp(input, max=max), "ClampMax")


def _named(out: Tensor, op: str) -> Tensor:
    """``out``'s Clamp node under the name of PyTorch's op (a tensor bound: ``ClampMinBackward1``)."""
    node = out._grad_fn
    if isinstance(node, Clamp):
        node.variant = f"{op}Backward{1 if node.tensor_bounds else 0}"
    return out


clip = clamp


# binary math -------------------------------------------------------------------------------------
class Maximum(Elementwise):
    """Elementwise max, NaN-propagating; on ties the gradient is split 0.5 / 0.5 as in PyTorch."""

    save_inputs = (0, 1)
    ufunc = "maximum"

    def compute(self, a, b):
        a, b, dtype = promote(self, a, b)
        if dtype.kind == "c":
            raise RuntimeError(f"{self.ufunc} not implemented for complex tensors.")
        return getattr(self.xp, self.ufunc)(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        half = grad / 2
        # PyTorch: where(a == b, grad / 2, grad).masked_fill_(a loses, 0), for each side
        a_loses, b_loses = (a < b, a > b) if self.ufunc == "maximum" else (a > b, a < b)
        grad_a = where(a == b, half, where(a_loses, 0.0, grad)) if self.needs_grad(0) else None
        grad_b = where(a == b, half, where(b_loses, 0.0, grad)) if self.needs_grad(1) else None
        return grad_a, grad_b


class Minimum(Maximum):
    ufunc = "minimum"


class Fmax(Elementwise):
    """Elementwise max ignoring NaN (a NaN loses); ties send the whole gradient to ``input``."""

    save_inputs = (0, 1)
    ufunc = "fmax"

    def compute(self, a, b):
        a, b, _ = promote(self, a, b)
        return getattr(self.xp, self.ufunc)(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        a_wins = ((a >= b) if self.ufunc == "fmax" else (a <= b)) | b.isnan()
        return (where(a_wins, grad, 0.0) if self.needs_grad(0) else None), (
            where(a_wins, 0.0, grad) if self.needs_grad(1) else None
        )


class Fmin(Fmax):
    ufunc = "fmin"


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return Maximum.apply(input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return Minimum.apply(input, other)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    return Fmax.apply(input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    return Fmin.apply(input, other)


class Atan2(Elementwise):
    """The angle of the point (other, input); d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2), and 0 at the
    origin (PyTorch's atan2_backward zeroes the infinite 1 / (a^2 + b^2) there instead of giving 0 * inf = NaN)."""

    save_inputs = (0, 1)

    def compute(self, a, b):
        a, b, _ = promote(self, a, b, to_float=True)
        return self.xp.arctan2(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        reciprocal = (a * a + b * b).reciprocal()
        scale = grad * where(reciprocal.isinf(), 0.0, reciprocal)
        return (scale * b if self.needs_grad(0) else None), (-scale * a if self.needs_grad(1) else None)


def atan2(input: Tensor, other) -> Tensor:
    return Atan2.apply(input, other)


arctan2 = atan2


class LogAddExp(Elementwise):
    """``log(exp(a) + exp(b))`` without overflow; the gradients are the softmax weights, written as PyTorch's
    ``1 / (1 + exp(b - a))`` from the inputs alone (PyTorch saves no output here)."""

    save_inputs = (0, 1)
    base2 = False

    def name(self) -> str:  # PyTorch's capitalization
        return "Logaddexp2Backward0" if self.base2 else "LogaddexpBackward0"

    def compute(self, a, b):
        a, b, _ = promote(self, a, b, to_float=True)
        return self.xp.logaddexp2(a, b) if self.base2 else self.xp.logaddexp(a, b)

    def backward(self, grad):
        a, b = self.saved_tensors
        power = (lambda t: t.exp2()) if self.base2 else (lambda t: t.exp())
        grad_a = grad / (1 + power(b - a)) if self.needs_grad(0) else None
        grad_b = grad / (1 + power(a - b)) if self.needs_grad(1) else None
        return grad_a, grad_b


class LogAddExp2(LogAddExp):
    base2 = True


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    return LogAddExp.apply(input, other)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    return LogAddExp2.apply(input, other)


class Xlogy(Elementwise):
    """``x * log(y)``, defined as 0 where x == 0 (unless y is NaN), as in PyTorch."""

    save_inputs = (0, 1)

    def compute(self, x, y):
        x, y, _ = promote(self, x, y, to_float=True)
        xp = self.xp
        zero = xp.logical_and(xp.equal(x, 0), xp.logical_not(xp.isnan(y)))
        return xp.where(zero, 0.0, x * xp.log(y)).astype(_result_dtype(x, y), copy=False)

    def backward(self, grad):
        x, y = self.saved_tensors
        grad_x = grad_y = None
        if self.needs_grad(0):
            grad_x = where((x == 0) & (y <= 0), 0.0, xlogy(grad, y))
        if self.needs_grad(1):
            grad_y = grad * x / y
        return grad_x, grad_y


def _result_dtype(a, b):
    return (a if type(a) not in _SCALAR_TYPES else b).dtype


def xlogy(input: Tensor, other) -> Tensor:
    return Xlogy.apply(input, other)


class Lerp(Elementwise):
    """``input + weight * (end - input)``, computed as PyTorch does (from the nearer end, so weight 1
    gives ``end`` exactly). Gradients: (1 - weight), weight, and (end - input) for a tensor weight."""

    save_inputs = (0, 1, 2)
    saved_when = {0: (2,), 1: (2,), 2: (0, 1)}  # a number weight: nothing is saved

    tensor_weight = False

    def name(self) -> str:  # LerpBackward0: a number weight, LerpBackward1: a tensor weight
        return "LerpBackward1" if self.tensor_weight else "LerpBackward0"

    def compute(self, start, end, weight):
        self.tensor_weight = hasattr(weight, "shape")
        start, end, weight, _ = promote(self, start, end, weight)
        xp = self.xp
        difference = end - start
        small = xp.abs(weight) < 0.5
        return xp.where(small, start + weight * difference, end - difference * (1 - weight)).astype(
            _result_dtype(start, end), copy=False
        )

    def backward(self, grad):
        start, end, weight = self.saved_tensors
        grad_start = grad * (1 - weight) if self.needs_grad(0) else None
        grad_end = grad * weight if self.needs_grad(1) else None
        grad_weight = grad * (end - start) if self.needs_grad(2) else None
        return grad_start, grad_end, grad_weight


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)`` (weight: a number or a broadcasting tensor).
    As in PyTorch, ``end`` has ``input``'s dtype, a floating one."""
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype} for `end` but got dtype {end.dtype}")
    if not input.dtype.is_floating_point:
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(input.dtype)}\'')
    return Lerp.apply(input, end, weight)


class Polygamma(Elementwise):
    """The n-th derivative of digamma (n = 0: digamma itself); its derivative is polygamma(n + 1, x)."""

    save_inputs = (0,)

    def compute(self, x, n):
        if array_kind(x.dtype) != "f":
            x = as_float(self, x)
        self.n = n
        if n == 0:
            return OPS["digamma"].kernel(self.xp, x)
        return _in_float64(lambda xp, a: special.polygamma(xp, n, a))(self.xp, x)

    def backward(self, grad):
        (x,) = self.saved_tensors
        return grad * polygamma(self.n + 1, x)


def polygamma(n: int, input: Tensor) -> Tensor:
    """``d^n/dx^n digamma(x)`` for an integer ``n >= 0`` (``Tensor.polygamma(n)``)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(input, n)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


class Logit(Elementwise):
    """``log(x / (1 - x))`` of x clamped to ``[eps, 1 - eps]`` when ``eps`` is given. Gradient as PyTorch's
    logit_backward: ``1 / (x (1 - x))`` inside; outside [eps, 1 - eps] 0, and without eps NaN outside [0, 1]."""

    save_inputs = (0,)

    def compute(self, x, eps=None):
        if array_kind(x.dtype) != "f":
            x = as_float(self, x)
        self.eps = eps
        if eps is not None:
            x = self.xp.clip(x, eps, 1 - eps)
        return self.xp.log(x / (1 - x))

    def backward(self, grad):
        (x,) = self.saved_tensors
        inside = grad / (x * (1 - x))
        if self.eps is None:
            return where((x < 0) | (x > 1), math.nan, inside)
        return where((x < self.eps) | (x > 1 - self.eps), 0.0, inside)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """The inverse of sigmoid, of the input clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    return Logit.apply(input, eps=None if eps is None else float(eps))


class Hypot(Elementwise):
    """``sqrt(a^2 + b^2)`` without overflow; gradients a / out and b / out (NaN at the origin, as PyTorch)."""

    save_inputs = (0, 1)
    save_output = True
    saved_when = {0: (0,), 1: (1,)}

    def compute(self, a, b):
        a, b, dtype = promote(self, a, b)
        if array_kind(dtype) != "f":  # PyTorch has no integer hypot kernel (and does not promote)
            raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{_LEGACY[dtype.name]}'")
        return self.xp.hypot(a, b)

    def backward(self, grad):
        a, b, out = self.saved_tensors
        return (grad * a / out if self.needs_grad(0) else None), (grad * b / out if self.needs_grad(1) else None)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    if not isinstance(other, Tensor):
        raise TypeError(f"hypot(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return Hypot.apply(input, other)


class Copysign(Elementwise):
    """|a| with the sign of b (integers promote to float). The gradient of ``a`` is ``out / a``, 0 where
    a == 0 (PyTorch's copysign_tensor_self_backward); ``b`` gets zeros."""

    save_inputs = (0,)
    save_output = True
    saved_when = {0: (0,)}  # b's gradient is zeros

    def compute(self, a, b):
        a, b, _ = promote(self, a, b, to_float=True)
        return self.xp.copysign(a, b)

    def backward(self, grad):
        a, out = self.saved_tensors
        grad_a = grad * where(a == 0, 0.0, out / a) if self.needs_grad(0) else None
        return grad_a, (_zeros(grad) if self.needs_grad(1) else None)


def copysign(input: Tensor, other) -> Tensor:
    return Copysign.apply(input, other)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2`` (broadcasting; each factor's gradient is the other times value).
    On integer tensors a float ``value`` is truncated to an integer first, as PyTorch casts it to their dtype."""
    return input + _value_for(value, input, tensor1, tensor2) * tensor1 * tensor2


def _value_for(value, *tensors):
    if isinstance(value, float) and not any(t.dtype.is_floating_point for t in tensors):
        return int(value)
    return value


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``; integer tensor1 and tensor2 are refused, as in PyTorch."""
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    return input + value * tensor1 / tensor2


# names -------------------------------------------------------------------------------------------
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821
absolute, fix = abs, trunc  # noqa: F821

__all__ = [name for name in UNARY if name not in PRIVATE] + [
    "polygamma", "logit", "hypot", "copysign", "addcmul", "addcdiv",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute", "fix", "round", "nan_to_num",
    "clamp", "clamp_min", "clamp_max", "clip", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2",
    "logaddexp", "logaddexp2", "xlogy", "lerp",
]
