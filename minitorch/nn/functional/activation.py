"""Activation functions (torch.nn.functional): each one a kernel on arrays beside its derivative.

Pointwise activations are one table, ``ACTIVATIONS``: ``name -> (kernel(xp, x, *params),
derivative(grad, x, y, *params))``, the derivative written in differentiable Tensor ops so double
backward works. softmax and log_softmax are fused ops (one pass, max-shifted for stability).

``inplace=True`` is accepted everywhere PyTorch accepts it, but minitorch computes these
activations out of place for now (in-place ops arrive with their own issue): the result is a new
tensor and ``input`` is left unchanged, so always use the returned value.
"""

from __future__ import annotations

import math
import warnings

from ... import _dtype
from ..._autocast_state import autocast_op
from ..._backends.dtypes import FLOAT32, is_bfloat16
from ..._dtype import scalar_type_name
from ...autograd import grad_mode
from ...ops import pointwise
from ...ops.arguments import user_stacklevel
from ...ops.comparison import depends_on, where
from ...ops.op import Op
from ...ops.pointwise import UNARY, sigmoid, tanh
from ...ops.promotion import Elementwise, bfloat16_in_float32
from ...tensor import Tensor, wrap_dim


def check_floating(name: str, input: Tensor) -> None:
    """Float-only kernels refuse integer tensors with PyTorch's dispatch error (a NotImplementedError, which
    is a RuntimeError)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(input.dtype)}\'')


_erf = UNARY["erf"][0]
_SQRT1_2 = 1 / math.sqrt(2.0)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_GELU_K = math.sqrt(2 / math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _normal_cdf(xp, x):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2 on an array."""
    cdf = _erf(xp, x * _SQRT1_2)
    cdf += 1
    cdf *= 0.5
    return cdf


def _gelu_kernel(xp, x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_TANH_GELU_K * (x + 0.044715 * x * x * x)))
    return x * _normal_cdf(xp, x)


def _gelu_derivative(g, x, cdf, approximate):
    """``cdf`` is Phi(x) (the Gelu op passes the forward's, so backward computes no erf), None for tanh."""
    if approximate == "tanh":
        t = (_TANH_GELU_K * (x + 0.044715 * x * x * x)).tanh()
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _TANH_GELU_K * (1 + 3 * 0.044715 * x * x))
    pdf = (-0.5 * x * x).exp() * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _softplus_kernel(xp, x, beta, threshold):
    z = x * beta
    return xp.where(z > threshold, x, xp.logaddexp(0, z) / beta).astype(x.dtype, copy=False)


def _hardswish_derivative(g, x, y):
    """PyTorch's hardswish_backward: 0 up to -3, x / 3 + 1/2 strictly inside, 1 from 3 on (and at NaN)."""
    return where(x <= -3, 0.0, where(x < 3, g * (x / 3 + 0.5), g))


class EluBackward(Op):
    """PyTorch's elu_backward(grad, x) as an op of its own (x <= 0: the exponential branch, so a NaN takes
    ``scale``), so that its derivatives are PyTorch's: elu_backward(gg, x) for grad, and elu_double_backward,
    ``elu_backward(gg * grad * input_scale, x) * (x < 0)``, for x. The mask multiplies, so at x == 0 the second
    derivative is 0 and where x >= 0 an infinite gradient gives nan, as in PyTorch."""

    save_inputs = (0, 1)

    def forward(self, g, x, negative_slope, scale, input_scale):
        xp = self.xp
        self.params = (negative_slope, scale, input_scale)
        exponential = g * negative_slope * xp.exp(xp.minimum(x, 0) * input_scale)
        return xp.where(x <= 0, exponential, g * scale).astype(x.dtype, copy=False)

    def backward(self, gg):
        g, x = self.saved_tensors
        negative_slope, scale, input_scale = self.params
        grad_g = EluBackward.apply(gg, x, *self.params) if self.needs_grad(0) else None
        grad_x = EluBackward.apply(gg * g * input_scale, x, *self.params) * (x < 0) if self.needs_grad(1) else None
        return grad_g, grad_x


# name: (kernel(xp, x, *params), derivative(grad, x, y, *params)); y is the output, None: as PyTorch, these ops
# save only their input, so writing into an activation's output in place leaves its backward valid.
# The derivatives are PyTorch's *_backward formulas, boundaries and NaN included (a NaN input passes the gradient
# where PyTorch's mask is written as "zero where x is outside"). Piecewise-constant ones read x only through a
# comparison: depends_on keeps x in their graph under create_graph (second derivative 0, as PyTorch's).
ACTIVATIONS = {
    "hardtanh": (
        lambda xp, x, lo, hi: xp.clip(x, lo, hi),
        lambda g, x, y, lo, hi: depends_on(where((x <= lo) | (x >= hi), 0.0, g), x),
    ),
    "leaky_relu": (
        lambda xp, x, slope: xp.where(x > 0, x, x * slope),
        lambda g, x, y, slope: depends_on(where(x > 0, g, g * slope), x),
    ),
    # elu, selu and celu: x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1)
    "elu": (
        lambda xp, x, alpha, scale, input_scale: xp.where(
            # (minimum(0, x) keeps -0.0: elu(-0.0) is -0.0 as PyTorch's expm1 gives it; seed 920483)
            x > 0, x * scale, (alpha * scale) * xp.expm1(xp.minimum(0, x) * input_scale)
        ),
        lambda g, x, y, alpha, scale, input_scale: EluBackward.apply(g, x, input_scale * alpha * scale, scale,
                                                                      input_scale),
    ),
    "gelu": (_gelu_kernel, _gelu_derivative),
    "silu": (
        lambda xp, x: x * UNARY["sigmoid"][0](xp, x),
        lambda g, x, y: g * x.sigmoid() * (1 + x * (1 - x.sigmoid())),
    ),
    "mish": (
        lambda xp, x: x * xp.tanh(xp.logaddexp(0, x)),
        lambda g, x, y: g * _mish_derivative(x),
    ),
    "softplus": (
        _softplus_kernel,
        lambda g, x, y, beta, threshold: where(x * beta > threshold, g, g * (x * beta).sigmoid()),
    ),
    "logsigmoid": (lambda xp, x: -xp.logaddexp(0, -x), lambda g, x, y: g * (-x).sigmoid()),
    "hardsigmoid": (
        lambda xp, x: xp.clip(x / 6 + 0.5, 0, 1),
        lambda g, x, y: depends_on(where((x > -3) & (x < 3), g / 6, 0.0), x, not_implemented="hardsigmoid_backward"),
    ),
    "hardswish": (lambda xp, x: x * xp.clip(x + 3, 0, 6) / 6, _hardswish_derivative),
    "hardshrink": (
        lambda xp, x, lambd: xp.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype, copy=False),  # NaN stays
        lambda g, x, y, lambd: depends_on(where((x >= -lambd) & (x <= lambd), 0.0, g), x),
    ),
    "softshrink": (
        lambda xp, x, lambd: xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0)),  # NaN stays
        lambda g, x, y, lambd: depends_on(where((x >= -lambd) & (x <= lambd), 0.0, g), x),
    ),
    "threshold": (
        lambda xp, x, threshold, value: xp.where(x > threshold, x, value).astype(x.dtype, copy=False),
        lambda g, x, y, threshold, value: depends_on(where(x <= threshold, 0.0, g), x),
    ),
}


def _mish_derivative(x: Tensor) -> Tensor:
    tsp = softplus(x).tanh()
    return tsp + x * x.sigmoid() * (1 - tsp * tsp)


class Activation(Elementwise):
    """Base of the table's ops: ``kernel`` and ``derivative`` come from ``ACTIVATIONS`` (Elementwise: the
    kernels run with numpy's floating-point warnings off, as PyTorch never warns)."""

    save_inputs = (0,)
    kernel = derivative = None

    def compute(self, x, *params):
        self.params = params
        if is_bfloat16(x.dtype):  # as PyTorch's kernels: computed in float32, rounded once
            return type(self).kernel(self.xp, x.astype(FLOAT32), *params).astype(x.dtype)
        return type(self).kernel(self.xp, x, *params)

    def backward(self, grad):
        (x,) = self.saved_tensors
        return type(self).derivative(grad, x, None, *self.params)


NODE_NAMES = {"logsigmoid": "LogSigmoidBackward0"}  # PyTorch's node names that are not the capitalized op name
OPS = {
    name: type(name.title().replace("_", ""), (Activation,), {
        "kernel": staticmethod(k), "derivative": staticmethod(d),
        **({"name": lambda self, _node=NODE_NAMES[name]: _node} if name in NODE_NAMES else {}),
        **({"row_major_output": True} if name == "logsigmoid" else {}),  # PyTorch allocates it row-major
    })
    for name, (k, d) in ACTIVATIONS.items()
}
# celu is elu with input_scale 1 / alpha, under PyTorch's node name for it
Celu = type("Celu", (OPS["elu"],), {"name": lambda self: "CeluBackward0"})


class Gelu(Activation):
    """The exact GELU keeps its forward's Phi(x) for backward instead of the output: the erf is most of
    GELU's cost, so backward reuses it (recomputed, differentiably, only under create_graph=True)."""

    save_output = False
    kernel, derivative = staticmethod(_gelu_kernel), staticmethod(_gelu_derivative)
    cdf = None

    def compute(self, x, approximate):
        self.params = (approximate,)
        dtype = x.dtype
        if is_bfloat16(dtype):  # as PyTorch's kernel: computed in float32, rounded once
            x = x.astype(FLOAT32)
        if approximate == "tanh":
            return _gelu_kernel(self.xp, x, approximate).astype(dtype, copy=False)
        self.cdf = _normal_cdf(self.xp, x)
        return (x * self.cdf).astype(dtype, copy=False)

    def backward(self, grad):
        (x,) = self.saved_tensors
        approximate = self.params[0]
        if approximate == "tanh" and grad_mode.state.enabled:  # create_graph: PyTorch's gelu_backward node
            return GeluTanhBackward.apply(grad, x)
        if approximate == "tanh":
            cdf = None
        elif grad_mode.state.enabled:  # create_graph: Phi(x) must carry its own derivative
            cdf = 0.5 * (1 + (x * _SQRT1_2).erf())
        else:
            cdf = self.constant(self.cdf)
        return _gelu_derivative(grad, x, cdf, approximate)

    def release_saved(self) -> None:
        super().release_saved()
        self.cdf = None


OPS["gelu"] = Gelu


class GeluTanhBackward(Op):
    """The tanh GELU's gradient as a node of its own, as PyTorch's gelu_backward: its derivative for the input
    is PyTorch's closed form (gelu_double_backward), so second derivatives round as PyTorch's do. Through the
    saturated tails the composite formula's autograd cancelled differently: 30% off in float32 (seed 14435)."""

    save_inputs = (0, 1)
    saved_when = {0: (1,), 1: (0, 1)}

    def forward(self, grad, x):
        t = self.xp.tanh(_TANH_GELU_K * (x + 0.044715 * x * x * x))
        return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _TANH_GELU_K * (1 + 3 * 0.044715 * x * x))

    def backward(self, gg):
        grad, x = self.saved_tensors
        grad_grad = GeluTanhBackward.apply(gg, x) if self.needs_grad(0) else None
        grad_x = None
        if self.needs_grad(1):  # PyTorch's gelu_double_backward, approximate='tanh'
            inner = _TANH_GELU_K * (x + 0.044715 * (x * x * x))
            tanh_inner, sech_inner = inner.tanh(), 1 / inner.cosh()
            f = 0.5 * x
            g = 1 - tanh_inner * tanh_inner
            h = _TANH_GELU_K * (1 + 3 * 0.044715 * x * x)
            g_prime = (2 * sech_inner) * (-sech_inner * tanh_inner) * h
            h_prime = 6 * 0.044715 * x * _TANH_GELU_K
            grad_x = gg * grad * (2 * (0.5 * g * h) + f * h * g_prime + f * g * h_prime)
        return grad_grad, grad_x


def _apply(name: str, input: Tensor, *params) -> Tensor:
    check_floating(name, input)
    return OPS[name].apply(input, *params)


# pointwise -----------------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(0, x)`` (the gradient at 0 is 0, as in PyTorch)."""
    return pointwise.relu(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where it is above ``threshold``, else ``value``."""
    return _apply("threshold", input, threshold, value)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clipped to ``[min_val, max_val]``; the gradient is 0 outside that range."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dtype.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return _apply("hardtanh", input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0.0, 6.0)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for positive inputs, ``negative_slope * x`` otherwise."""
    return _apply("leaky_relu", input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for positive inputs, ``alpha * (exp(x) - 1)`` otherwise."""
    return _apply("elu", input, alpha, 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Self-normalizing ELU: ``scale * elu(x, alpha)`` with the constants of Klambauer et al. (2017)."""
    return _apply("elu", input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    check_floating("elu", input)
    return Celu.apply(input, alpha, 1.0, 1.0 / alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (Phi: the standard normal CDF), or its tanh approximation with ``approximate='tanh'``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, but got {approximate}")
    return _apply("gelu", input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (also called swish)."""
    return _apply("silu", input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _apply("mish", input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, computed stably; linear where ``beta * x > threshold``."""
    return _apply("softplus", input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably as ``-softplus(-x)``."""
    return _apply("logsigmoid", input)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, composed of those ops as in PyTorch (its gradients, nan at +-inf included, are theirs;
    integers divide to floats)."""
    return input / (1 + input.abs())


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clip(x / 6 + 1/2, 0, 1)``."""
    return _apply("hardsigmoid", input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)``."""
    return _apply("hardswish", input)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    return _apply("hardshrink", input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` moved ``lambd`` towards 0, and 0 within ``[-lambd, lambd]``."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _apply("softshrink", input, lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


@autocast_op("lower")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` for positive inputs, ``weight * x`` otherwise; ``weight`` has 1 or C (dim 1) entries."""
    n = weight.numel()
    channels = input.shape[1] if input.dim() >= 2 else (input.shape[0] if input.dim() == 1 else 1)
    if n != 1 and n != channels:
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} and channel "
            f"size = {channels}."
        )
    if n != 1 and input.dim() >= 2:
        weight = weight.reshape((n,) + (1,) * (input.dim() - 2))
    elif n == 1:
        weight = weight.reshape(())
    return Prelu.apply(input, weight)


class Prelu(Elementwise):
    """``x`` where ``x > 0``, else ``weight * x`` (``weight`` broadcasts; the engine sums its gradient back).
    Its backward is an op of its own, PyTorch's _prelu_kernel_backward, so double backward is PyTorch's."""

    def name(self) -> str:
        return "PreluKernelBackward0"

    save_inputs = (0, 1)

    def compute(self, x, weight):
        return self.xp.where(x > 0, x, weight * x)

    def backward(self, grad):
        x, weight = self.saved_tensors
        grad_x, grad_weight = PreluKernelBackward.apply(grad, x, weight)
        return grad_x if self.needs_grad(0) else None, grad_weight if self.needs_grad(1) else None


class PreluKernelBackward(Op):
    """``(grad, x, weight) -> (grad_x, grad_weight)``: ``where(x > 0, grad, grad * weight)`` and
    ``where(x > 0, 0, grad * x)`` (x's shape; the engine sums it to weight's).

    Its backward is PyTorch's formula for _prelu_kernel_backward, whose masks take ``x >= 0``: at exactly
    x = 0 the second derivative in the weight is 0 though the first derivative there is the weight's branch."""

    save_inputs = (0, 1, 2)

    def forward(self, grad, x, weight):
        xp = self.xp
        positive = x > 0
        return xp.where(positive, grad, grad * weight), xp.where(positive, 0, grad * x).astype(grad.dtype)

    def backward(self, grad_grad_x, grad_grad_weight):
        grad, x, weight = self.saved_tensors
        nonnegative = x >= 0
        if grad_grad_x is None:
            d_grad = where(nonnegative, 0.0, grad_grad_weight * x)
        elif grad_grad_weight is None:
            d_grad = where(nonnegative, grad_grad_x, grad_grad_x * weight)
        else:
            d_grad = where(nonnegative, grad_grad_x, grad_grad_x * weight + grad_grad_weight * x)
        zeros = x.new_zeros(x.shape)
        d_x = zeros if grad_grad_weight is None else where(nonnegative, 0.0, grad * grad_grad_weight)
        d_weight = zeros if grad_grad_x is None else where(nonnegative, 0.0, grad * grad_grad_x)
        return d_grad, d_x, d_weight


class RreluWithNoise(Elementwise):
    """rrelu in training: ``x`` where ``x > 0``, else ``noise * x`` with a random per-element slope. As PyTorch's
    rrelu_with_noise_backward, the input's gradient reads x (depends_on), with second derivative 0."""

    save_inputs = (0, 1)
    row_major_output = True  # PyTorch's output is allocated row-major, whatever the input's layout

    def compute(self, x, noise):
        return self.xp.where(x > 0, x, noise * x)

    def backward(self, grad):
        x, noise = self.saved_tensors
        return depends_on(where(x > 0, grad, grad * noise), x), None


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training,
    and is ``(lower + upper) / 2`` in evaluation."""
    if not training:  # leaky_relu's values, under PyTorch's node (rrelu_with_noise) and its row-major output
        return RreluWithNoise.apply(input, (lower + upper) / 2)
    # PyTorch draws one double uniform per element <= 0, in memory order, and computes u * (upper - lower) + lower
    # unfused (Activation.cpp is built without FMA), the bounds first rounded to the input's dtype (float for half)
    bound = input.new_tensor([lower, upper], dtype=input.dtype if input.dtype is not _dtype.float16 else None)
    lower, upper = bound.tolist()
    with grad_mode.no_grad():
        nonpositive = input.detach().contiguous() <= 0
        slopes = input.new_empty((int(nonpositive.sum()),), dtype=_dtype.float64).uniform_() * (upper - lower) + lower
        slope = input.new_ones(input.shape)
        slope[nonpositive] = slopes.to(input.dtype)
    return RreluWithNoise.apply(input, slope)  # PyTorch's rrelu_with_noise: the slope applies for x <= 0


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = wrap_dim(dim, input.dim())
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


# softmax family ------------------------------------------------------------------------------


class Softmax(Op):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``; gradient ``y * (g - sum(g * y))``."""

    save_output = True

    @bfloat16_in_float32
    def forward(self, x, dim):
        self.dim = dim
        if not x.flags.c_contiguous:  # PyTorch runs on input.contiguous(): the output is row-major
            x = x.copy()
        if x.size == 0:
            return x.copy()
        e = self.xp.exp(x - x.max(axis=dim, keepdims=True))
        e /= e.sum(axis=dim, keepdims=True)
        return e

    def backward(self, grad):
        (y,) = self.saved_tensors
        return y * (grad - (grad * y).sum(self.dim, keepdim=True))

    def jvp(self, inputs, outputs, tangents):  # softmax's Jacobian is symmetric: J t = y * (t - sum(t * y))
        y, t = outputs[0], tangents[0]
        return y * (t - (t * y).sum(self.dim, keepdim=True))


class LogSoftmax(Op):
    """``x - max - log(sum(exp(x - max)))`` along ``dim``; gradient ``g - exp(y) * sum(g)``."""

    save_output = True

    @bfloat16_in_float32
    def forward(self, x, dim):
        self.dim = dim
        if not x.flags.c_contiguous:  # as softmax: the output is row-major
            x = x.copy()
        if x.size == 0:
            return x.copy()
        shifted = x - x.max(axis=dim, keepdims=True)
        shifted -= self.xp.log(self.xp.exp(shifted).sum(axis=dim, keepdims=True))
        return shifted

    def backward(self, grad):
        (y,) = self.saved_tensors
        total = grad.sum(self.dim, keepdim=True)
        if y.dtype is not _dtype.float32:
            return grad - y.exp() * total
        # float32, where p = exp(y) is near 1, g - p * sum(g) cancels (seed 8361): PyTorch's kernel computes it
        # with one rounding (a fused multiply-add) from a p within an ulp; numpy's float32 exp is up to ~2 ulp
        # off. So p is exp in float64 rounded once, and the product and difference are taken in float64.
        p = y.double().exp().to(y.dtype)
        return (grad.double() - p.double() * total.double()).to(y.dtype)

    def jvp(self, inputs, outputs, tangents):  # d log_softmax(x) = t - sum(softmax(x) * t)
        y, t = outputs[0], tangents[0]
        return t - (y.exp() * t).sum(self.dim, keepdim=True)


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_like(op, name: str, input: Tensor, dim, dtype) -> Tensor:
    if dim is None:
        dim = _softmax_dim(name, input.dim())
    if dtype is not None:
        input = input.to(dtype)
    try:
        dim = wrap_dim(dim, input.dim())
    except TypeError:  # a dimension name
        dim = input._wrap_dim(dim)
    check_floating(f"{name}_lastdim_kernel_impl" if dim == input.dim() - 1 or input.dim() == 0 else
                   f"{name}_kernel_impl", input)
    if input.dim() == 0:
        return op.apply(input.reshape(1), 0).reshape(())
    return op.apply(input, dim)


@autocast_op("float32", device_types=("cuda",))
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max so large inputs do not overflow;
    ``dtype`` casts the input first. (``_stacklevel`` is accepted for PyTorch's signature; the implicit-dim
    warning always points at the caller outside minitorch.)"""
    return _softmax_like(Softmax, "softmax", input, dim, dtype)


@autocast_op("float32", device_types=("cuda",))
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed directly (never takes the log of a rounded-to-0 softmax)."""
    return _softmax_like(LogSoftmax, "log_softmax", input, dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


def _dim_required(function):
    """``torch.softmax`` / ``Tensor.softmax`` (and log_softmax): the functional form with ``dim`` required."""

    def with_dim(input: Tensor, dim: int, dtype=None) -> Tensor:
        return function(input, dim, dtype=dtype)

    with_dim.__name__ = with_dim.__qualname__ = function.__name__
    with_dim.__doc__ = f"``F.{function.__name__}`` along ``dim`` (required); ``dtype`` casts the input first."
    return with_dim


# torch.softmax(input, dim, dtype=None) and torch.log_softmax: re-exported by the minitorch namespace
torch_softmax, torch_log_softmax = _dim_required(softmax), _dim_required(log_softmax)

__all__ = [
    "threshold", "relu", "hardtanh", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish",
    "softplus", "logsigmoid", "softsign", "hardsigmoid", "hardswish", "hardshrink", "softshrink", "tanhshrink",
    "prelu", "rrelu", "glu", "sigmoid", "tanh", "softmax", "log_softmax", "softmin",
]
