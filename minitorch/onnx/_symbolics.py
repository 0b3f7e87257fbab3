"""How each traced op becomes ONNX nodes: ``TRANSLATIONS[op class name](g, step)``.

A translation reads the op's arguments as ``apply`` got them (``step.args``, ``step.params``) and its traced
outputs (shapes and dtypes), adds nodes to the GraphBuilder ``g`` and returns one ONNX value name per
output (None for an output it does not translate, such as max-pool indices: using one raises). Shapes the
forward computed in Python (``x.view(B, -1)``) are written so that a dynamic batch still works: a reshape
copies the input's leading dims (ONNX's 0) and infers one more (-1), an expand keeps every dim it does not
grow at 1.
"""

from __future__ import annotations

import math

from .._dtype import bool as bool_dtype
from .._dtype import float64, int64
from .._finfo import finfo
from ..tensor import Tensor
from ._graph import as_array
from .errors import UnsupportedOperatorError

_INT64_MAX = 2**63 - 1
TRANSLATIONS: dict = {}


def translates(*names: str):
    def register(function):
        for name in names:
            TRANSLATIONS[name] = function
        return function

    return register


def _out(step, i: int = 0) -> Tensor:
    return step.outputs[i]


def _operand(g, value, dtype) -> str:
    """A tensor argument (cast to ``dtype`` when it differs) or a Python scalar as a ``dtype`` constant."""
    if isinstance(value, Tensor):
        name = g.value(value)
        return name if value.dtype is dtype else g.node("Cast", [name], to=g.onnx_type(dtype))
    return g.scalar(value, dtype)


def _x(g, step) -> str:
    return g.value(step.args[0])


def _dims(dims, ndim: int) -> list:
    return [d % ndim if ndim else 0 for d in dims]


# elementwise ---------------------------------------------------------------------------------------------
_UNARY = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin",
          "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "tanh": "Tanh", "asinh": "Asinh",
          "acosh": "Acosh", "atanh": "Atanh", "sigmoid": "Sigmoid", "reciprocal": "Reciprocal", "erf": "Erf",
          "abs": "Abs", "relu": "Relu", "sign": "Sign", "floor": "Floor", "ceil": "Ceil"}


def _unary(onnx_op: str):
    def translate(g, step):
        return [g.node(onnx_op, [_operand(g, step.args[0], _out(step).dtype)])]

    return translate


for _name, _onnx_op in _UNARY.items():
    TRANSLATIONS[_name.capitalize()] = _unary(_onnx_op)


@translates("Rsqrt")
def _rsqrt(g, step):
    return [g.node("Reciprocal", [g.node("Sqrt", [_operand(g, step.args[0], _out(step).dtype)])])]


@translates("Square")
def _square(g, step):
    x = _operand(g, step.args[0], _out(step).dtype)
    return [g.node("Mul", [x, x])]


@translates("Log1p", "Expm1", "Log2", "Log10", "Exp2")
def _log_exp(g, step):
    dtype = _out(step).dtype
    x = _operand(g, step.args[0], dtype)
    kind = step.op.__name__
    if kind == "Log1p":
        return [g.node("Log", [g.node("Add", [x, g.scalar(1, dtype)])])]
    if kind == "Expm1":
        return [g.node("Sub", [g.node("Exp", [x]), g.scalar(1, dtype)])]
    if kind == "Exp2":
        return [g.node("Pow", [g.scalar(2, dtype), x])]
    return [g.node("Div", [g.node("Log", [x]), g.scalar(math.log(2 if kind == "Log2" else 10), dtype)])]


def _binary(onnx_op: str):
    def translate(g, step):
        dtype = _out(step).dtype
        a, b = step.args[:2]
        alpha = step.params.get("alpha", step.args[2] if len(step.args) > 2 else 1)
        if alpha != 1:
            b = g.node("Mul", [_operand(g, b, dtype), g.scalar(alpha, dtype)])
        else:
            b = _operand(g, b, dtype)
        return [g.node(onnx_op, [_operand(g, a, dtype), b])]

    return translate


TRANSLATIONS.update({"Add": _binary("Add"), "Sub": _binary("Sub"), "Mul": _binary("Mul"),
                     "Maximum": _binary("Max"), "Minimum": _binary("Min")})


@translates("Div", "FloorDivide")
def _div(g, step):
    dtype = _out(step).dtype
    mode = step.params.get("rounding_mode", step.args[2] if len(step.args) > 2 else None)
    if mode is None:
        return [g.node("Div", [_operand(g, step.args[0], dtype), _operand(g, step.args[1], dtype)])]
    inner = dtype if dtype.is_floating_point else float64
    q = g.node("Div", [_operand(g, step.args[0], inner), _operand(g, step.args[1], inner)])
    if mode == "floor":
        q = g.node("Floor", [q])
    else:  # trunc: sign(q) * floor(|q|)
        q = g.node("Mul", [g.node("Sign", [q]), g.node("Floor", [g.node("Abs", [q])])])
    return [q if inner is dtype else g.node("Cast", [q], to=g.onnx_type(dtype))]


@translates("Remainder")
def _remainder(g, step):
    """Python's modulo (the divisor's sign): Mod for integers, a - floor(a / b) b for floats."""
    dtype = _out(step).dtype
    a, b = (_operand(g, v, dtype) for v in step.args[:2])
    if not dtype.is_floating_point:
        return [g.node("Mod", [a, b], fmod=0)]
    return [g.node("Sub", [a, g.node("Mul", [g.node("Floor", [g.node("Div", [a, b])]), b])])]


@translates("Pow")
def _pow(g, step):
    dtype = _out(step).dtype
    return [g.node("Pow", [_operand(g, step.args[0], dtype), _operand(g, step.args[1], dtype)])]


@translates("Neg")
def _neg(g, step):
    return [g.node("Neg", [_operand(g, step.args[0], _out(step).dtype)])]


def _comparison_dtype(args):
    tensors = [a for a in args if isinstance(a, Tensor)]
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype.is_floating_point and not dtype.is_floating_point:
            dtype = t.dtype
    if not dtype.is_floating_point and any(isinstance(a, float) for a in args):
        dtype = float64
    return dtype


def _comparison(onnx_op: str, negate: bool = False):
    def translate(g, step):
        dtype = _comparison_dtype(step.args[:2])
        out = g.node(onnx_op, [_operand(g, a, dtype) for a in step.args[:2]])
        return [g.node("Not", [out]) if negate else out]

    return translate


TRANSLATIONS.update({"Eq": _comparison("Equal"), "Ne": _comparison("Equal", negate=True),
                     "Lt": _comparison("Less"), "Le": _comparison("LessOrEqual"), "Gt": _comparison("Greater"),
                     "Ge": _comparison("GreaterOrEqual")})


@translates("LogicalNot")
def _logical_not(g, step):
    return [g.node("Not", [_operand(g, step.args[0], bool_dtype)])]


def _logical(onnx_op: str):
    def translate(g, step):
        return [g.node(onnx_op, [_operand(g, a, bool_dtype) for a in step.args[:2]])]

    return translate


TRANSLATIONS.update({"LogicalAnd": _logical("And"), "LogicalOr": _logical("Or"), "LogicalXor": _logical("Xor")})


def _bitwise(bool_op: str, int_op: str):
    """On bool tensors the logical op; on integers ONNX's Bitwise* (opset 18)."""

    def translate(g, step):
        dtype = _out(step).dtype
        operands = [_operand(g, a, dtype) for a in step.args[:2] if a is not None]
        if dtype is bool_dtype:
            return [g.node(bool_op, operands)]
        if g.opset < 18:
            raise UnsupportedOperatorError(f"minitorch::{step.op.__name__} (on integers)", g.opset, 18)
        return [g.node(int_op, operands)]

    return translate


TRANSLATIONS.update({"BitwiseAnd": _bitwise("And", "BitwiseAnd"), "BitwiseOr": _bitwise("Or", "BitwiseOr"),
                     "BitwiseXor": _bitwise("Xor", "BitwiseXor"), "BitwiseNot": _bitwise("Not", "BitwiseNot")})


@translates("Isnan", "Isinf", "Isposinf", "Isneginf", "Isfinite")
def _classify(g, step):
    x = step.args[0]
    kind = step.op.__name__
    value = g.value(x)
    if not x.dtype.is_floating_point:  # integers: every element finite
        every = g.node("Equal", [value, value])
        return [every if kind == "Isfinite" else g.node("Not", [every])]
    if kind == "Isnan":
        return [g.node("IsNaN", [value])]
    if kind in ("Isinf", "Isposinf", "Isneginf"):
        return [g.node("IsInf", [value], detect_positive=int(kind != "Isneginf"),
                       detect_negative=int(kind != "Isposinf"))]
    return [g.node("Not", [g.node("Or", [g.node("IsNaN", [value]), g.node("IsInf", [value])])])]


@translates("Where", "MaskedFill")
def _where(g, step):
    condition, a, b = step.args[:3]
    dtype = _out(step).dtype
    condition = _operand(g, condition, bool_dtype)
    return [g.node("Where", [condition, _operand(g, a, dtype), _operand(g, b, dtype)])]


@translates("Clamp", "Hardtanh")
def _clamp(g, step):
    dtype = _out(step).dtype
    x = _operand(g, step.args[0], dtype)
    low, high = step.args[1], step.args[2]
    if isinstance(low, Tensor) or isinstance(high, Tensor):
        if low is not None:
            x = g.node("Max", [x, _operand(g, low, dtype)])
        if high is not None:
            x = g.node("Min", [x, _operand(g, high, dtype)])
        return [x]
    return [g.node("Clip", [x, "" if low is None else g.scalar(low, dtype), "" if high is None else
                            g.scalar(high, dtype)])]


# activations ---------------------------------------------------------------------------------------------
@translates("Gelu")
def _gelu(g, step):
    dtype = _out(step).dtype
    x = _operand(g, step.args[0], dtype)
    approximate = step.args[1] if len(step.args) > 1 else "none"
    if g.opset >= 20:
        return [g.node("Gelu", [x], approximate=approximate)]
    half = g.node("Mul", [x, g.scalar(0.5, dtype)])
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.scalar(0.044715, dtype)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.scalar(math.sqrt(2 / math.pi), dtype)])])
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        t = g.node("Erf", [g.node("Mul", [x, g.scalar(1 / math.sqrt(2), dtype)])])
    return [g.node("Mul", [half, g.node("Add", [t, g.scalar(1, dtype)])])]


@translates("Silu")
def _silu(g, step):
    x = _operand(g, step.args[0], _out(step).dtype)
    return [g.node("Mul", [x, g.node("Sigmoid", [x])])]


@translates("Mish")
def _mish(g, step):
    x = _operand(g, step.args[0], _out(step).dtype)
    if g.opset >= 18:
        return [g.node("Mish", [x])]
    return [g.node("Mul", [x, g.node("Tanh", [g.node("Softplus", [x])])])]


@translates("LeakyRelu")
def _leaky_relu(g, step):
    return [g.node("LeakyRelu", [_x(g, step)], alpha=float(step.args[1]))]


@translates("Elu")
def _elu(g, step):
    dtype = _out(step).dtype
    x = _x(g, step)
    alpha, scale, input_scale = step.args[1:4]
    if input_scale == 1:
        y = g.node("Elu", [x], alpha=float(alpha))
        return [y if scale == 1 else g.node("Mul", [y, g.scalar(scale, dtype)])]
    # where(x > 0, x scale, alpha scale (exp(min(x, 0) input_scale) - 1))
    zero = g.scalar(0, dtype)
    exponential = g.node("Exp", [g.node("Mul", [g.node("Min", [x, zero]), g.scalar(input_scale, dtype)])])
    negative = g.node("Mul", [g.node("Sub", [exponential, g.scalar(1, dtype)]), g.scalar(alpha * scale, dtype)])
    positive = g.node("Mul", [x, g.scalar(scale, dtype)])
    return [g.node("Where", [g.node("Greater", [x, zero]), positive, negative])]


@translates("Softplus")
def _softplus(g, step):
    dtype = _out(step).dtype
    x = _x(g, step)
    beta, threshold = step.args[1:3]
    z = x if beta == 1 else g.node("Mul", [x, g.scalar(beta, dtype)])
    soft = g.node("Softplus", [z])
    if beta != 1:
        soft = g.node("Div", [soft, g.scalar(beta, dtype)])
    return [g.node("Where", [g.node("Greater", [z, g.scalar(threshold, dtype)]), x, soft])]


@translates("Hardsigmoid")
def _hardsigmoid(g, step):
    return [g.node("HardSigmoid", [_x(g, step)], alpha=1 / 6, beta=0.5)]


@translates("Hardswish")
def _hardswish(g, step):
    return [g.node("HardSwish", [_x(g, step)])]


@translates("Logsigmoid")
def _logsigmoid(g, step):
    return [g.node("Neg", [g.node("Softplus", [g.node("Neg", [_x(g, step)])])])]


@translates("Softmax", "LogSoftmax")
def _softmax(g, step):
    return [g.node(step.op.__name__, [_x(g, step)], axis=int(step.args[1]))]


@translates("Prelu")
def _prelu(g, step):
    x, weight = step.args[:2]
    slope = g.value(weight)
    if x.dim() >= 2 and weight.numel() > 1:  # one slope per channel (dim 1): (C, 1, ..., 1) broadcasts
        slope = g.node("Reshape", [slope, g.ints([-1] + [1] * (x.dim() - 2))])
    return [g.node("PRelu", [g.value(x), slope])]


# linear algebra ------------------------------------------------------------------------------------------
@translates("Linear")
def _linear(g, step):
    x, weight = step.args[:2]
    bias = step.args[2] if len(step.args) > 2 else None
    if weight.dim() == 2 and x.dim() == 2:
        inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
        return [g.node("Gemm", inputs, transB=1)]
    w = g.value(weight)
    if weight.dim() == 2:
        w = g.node("Transpose", [w], perm=[1, 0])
    y = g.node("MatMul", [g.value(x), w])
    return [y if bias is None else g.node("Add", [y, g.value(bias)])]


@translates("Matmul")
def _matmul(g, step):
    return [g.node("MatMul", [g.value(step.args[0]), g.value(step.args[1])])]


@translates("Einsum")
def _einsum(g, step):
    return [g.node("Einsum", [g.value(a) for a in step.args], equation=step.params["equation"])]


# convolution, pooling, normalization ---------------------------------------------------------------------
def _window_attributes(geometry, with_dilation: bool = True) -> dict:
    """kernel_shape, strides, pads (before, then after: what the windows reach past the input's end) and
    dilations of a WindowGeometry."""
    after = [max(0, e - n - p) for e, n, p in zip(geometry.extent, geometry.in_size, geometry.padding)]
    attributes = {"kernel_shape": list(geometry.kernel), "strides": list(geometry.stride),
                  "pads": list(geometry.padding) + after}
    if with_dilation and any(d != 1 for d in geometry.dilation):
        attributes["dilations"] = list(geometry.dilation)
    return attributes


@translates("Conv")
def _conv(g, step):
    x, weight, bias, geometry = step.args[:4]
    inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    return [g.node("Conv", inputs, group=geometry.groups, **_window_attributes(geometry))]


@translates("MaxPool")
def _max_pool(g, step):
    x, plan = step.args[:2]
    geometry = getattr(plan, "geometry", None)
    if geometry is not None:
        return [g.node("MaxPool", [g.value(x)], **_window_attributes(geometry)), None]
    # adaptive: windows of equal size when each input size is a multiple of the output size
    if any(n % o for n, o in zip(plan.in_size, plan.out_size)):
        raise UnsupportedOperatorError("minitorch::MaxPool (adaptive_max_pool with an output size that does not "
                                       "divide the input size)", g.opset, None)
    kernel = [n // o for n, o in zip(plan.in_size, plan.out_size)]
    return [g.node("MaxPool", [g.value(x)], kernel_shape=kernel, strides=kernel), None]


@translates("WindowSum")
def _window_sum(g, step):
    """avg_pool: the sum of each window (an average over the whole kernel times its size), times ``scale``."""
    x, geometry, scale = step.args[:3]
    dtype = _out(step).dtype
    if any(d != 1 for d in geometry.dilation) and g.opset < 19:
        raise UnsupportedOperatorError("minitorch::WindowSum (dilated avg_pool)", g.opset, 19)
    y = g.node("AveragePool", [g.value(x)], count_include_pad=1, **_window_attributes(geometry, g.opset >= 19))
    y = g.node("Mul", [y, g.scalar(math.prod(geometry.kernel), dtype)])
    if scale is None:
        return [y]
    if isinstance(scale, (int, float)):
        return [g.node("Mul", [y, g.scalar(scale, dtype)])]
    return [g.node("Mul", [y, g.initializer(_array(scale, dtype), "pool_scale")])]


def _array(array, dtype):
    array = as_array(array)
    return array.astype(array.dtype.type if dtype.name == "bfloat16" else dtype.name, copy=False)


@translates("AlongDim")
def _along_dim(g, step):
    """adaptive_avg_pool along one dim: a matrix (out, in) applied to that dim, as a MatMul on the last dim."""
    x, dim, matrix = step.args[:3]
    ndim = x.dim()
    perm = list(range(ndim))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    y = g.node("Transpose", [g.value(x)], perm=perm) if dim != ndim - 1 else g.value(x)
    y = g.node("MatMul", [y, g.initializer(_array(matrix, x.dtype).T.copy(), "pool_matrix")])
    return [g.node("Transpose", [y], perm=perm) if dim != ndim - 1 else y]


@translates("Normalize")
def _normalize(g, step):
    """(x - mean) / sqrt(var + eps) over ``dims``, biased variance (layer, group and instance norm)."""
    x, dims, eps = step.args[:3]
    dtype = _out(step).dtype
    axes = _dims(dims, x.dim())
    value = g.value(x)
    centered = g.node("Sub", [value, g.reduce("ReduceMean", value, axes, True)])
    var = g.reduce("ReduceMean", g.node("Mul", [centered, centered]), axes, True)
    return [g.node("Div", [centered, g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, dtype)])])])]


@translates("NormalizeWithRunningStats")
def _normalize_running(g, step):
    x, mean, var, eps = step.args[:4]
    dtype = _out(step).dtype
    centered = g.node("Sub", [g.value(x), _operand(g, mean, dtype)])
    denominator = g.node("Sqrt", [g.node("Add", [_operand(g, var, dtype), g.scalar(eps, dtype)])])
    return [g.node("Div", [centered, denominator])]


@translates("NativeAffine")
def _native_affine(g, step):
    y, weight, bias = step.args[:3]
    out = g.value(y)
    if weight is not None:
        out = g.node("Mul", [out, g.value(weight)])
    if bias is not None:
        out = g.node("Add", [out, g.value(bias)])
    return [out]


@translates("Embedding")
def _embedding(g, step):
    weight, indices = step.args[:2]
    return [g.node("Gather", [g.value(weight), _operand(g, indices, int64)], axis=0)]


@translates("ConstantPad")
def _constant_pad(g, step):
    x, pads, value = step.args[:3]
    onnx_pads = [p[0] for p in pads] + [p[1] for p in pads]
    return [g.node("Pad", [g.value(x), g.ints(onnx_pads), g.scalar(value, x.dtype)], mode="constant")]


# reductions ----------------------------------------------------------------------------------------------
@translates("Sum", "Mean")
def _sum_mean(g, step):
    x, dims, keepdim = step.args[:3]
    dtype = _out(step).dtype
    onnx_op = "ReduceSum" if step.op.__name__ == "Sum" else "ReduceMean"
    axes = _dims(dims, x.dim())
    if not axes:  # nothing reduced (a 0-dim input)
        return [g.node("Identity", [_operand(g, x, dtype)])]
    return [g.reduce(onnx_op, _operand(g, x, dtype), axes, keepdim)]


@translates("Extremum")
def _extremum(g, step):
    x, dims, keepdim, largest = step.args[:4]
    axes = _dims(dims, x.dim())
    if not axes:
        return [g.node("Identity", [g.value(x)])]
    return [g.reduce("ReduceMax" if largest else "ReduceMin", g.value(x), axes, keepdim)]


@translates("ExtremumAlongDim")
def _extremum_along_dim(g, step):
    x, dim, keepdim, largest = step.args[:4]
    axis = _dims([dim], x.dim())[0]
    value = g.value(x)
    values = g.reduce("ReduceMax" if largest else "ReduceMin", value, [axis], keepdim)
    indices = g.node("ArgMax" if largest else "ArgMin", [value], axis=axis, keepdims=int(keepdim))
    return [values, indices]


@translates("ArgExtremum")
def _arg_extremum(g, step):
    x, dim, keepdim, largest = step.args[:4]
    value = g.value(x)
    if dim is None:  # over the flattened input
        value, axis, keepdim = g.node("Reshape", [value, g.ints([-1])]), 0, False
    else:
        axis = _dims([dim], x.dim())[0]
    return [g.node("ArgMax" if largest else "ArgMin", [value], axis=axis, keepdims=int(keepdim))]


@translates("Var")
def _var(g, step):
    x, dims, correction, keepdim, take_sqrt = step.args[:5]
    dtype = _out(step).dtype
    axes = _dims(dims, x.dim())
    value = g.value(x)
    count = math.prod(x.shape[a] for a in axes)
    centered = g.node("Sub", [value, g.reduce("ReduceMean", value, axes, True)])
    total = g.reduce("ReduceSum", g.node("Mul", [centered, centered]), axes, keepdim)
    out = g.node("Div", [total, g.scalar(max(count - correction, 0), dtype)])
    return [g.node("Sqrt", [out]) if take_sqrt else out]


# shapes and views ----------------------------------------------------------------------------------------
def reshape_target(in_shape: tuple, out_shape: tuple) -> list:
    """The ONNX Reshape shape for a traced reshape: the leading dims it keeps are copied from the input (0),
    the trailing dims it keeps and the rest are literal, except the first dim that is neither, which is
    inferred (-1); so a reshape written with ``x.size(0)`` follows a dynamic batch size."""
    target = list(out_shape)
    lead = 0
    while lead < min(len(in_shape), len(out_shape)) and in_shape[lead] == out_shape[lead] and in_shape[lead] != 0:
        target[lead] = 0
        lead += 1
    trail = 0
    while (trail < min(len(in_shape), len(out_shape)) - lead and in_shape[-1 - trail] == out_shape[-1 - trail]):
        trail += 1
    if lead < len(out_shape) - trail and 0 not in out_shape:
        target[lead] = -1
    return target


@translates("View")
def _view(g, step):
    x = step.args[0]
    out = _out(step)
    return [g.node("Reshape", [g.value(x), g.ints(reshape_target(tuple(x.shape), tuple(out.shape)))])]


@translates("Permute")
def _permute(g, step):
    x, dims = step.args[:2]
    return [g.node("Transpose", [g.value(x)], perm=_dims(dims, x.dim()))]


@translates("Transpose")
def _transpose(g, step):
    x, dim0, dim1 = step.args[:3]
    perm = list(range(x.dim()))
    if not perm:
        return [g.node("Identity", [g.value(x)])]
    a, b = _dims([dim0, dim1], x.dim())
    perm[a], perm[b] = perm[b], perm[a]
    return [g.node("Transpose", [g.value(x)], perm=perm)]


@translates("Expand")
def _expand(g, step):
    x = step.args[0]
    out_shape = tuple(_out(step).shape)
    in_shape = (1,) * (len(out_shape) - x.dim()) + tuple(x.shape)
    target = [1 if i == o else o for i, o in zip(in_shape, out_shape)]  # dims kept: 1 (any size broadcasts)
    return [g.node("Expand", [g.value(x), g.ints(target)])]


@translates("Squeeze")
def _squeeze(g, step):
    x, dims = step.args[:2]
    dims = [dims] if isinstance(dims, int) else list(dims) if dims is not None else list(range(x.dim()))
    axes = [d for d in _dims(dims, x.dim()) if x.shape[d] == 1]
    if not axes:
        return [g.node("Identity", [g.value(x)])]
    return [g.node("Squeeze", [g.value(x), g.ints(axes)])]


@translates("Unsqueeze")
def _unsqueeze(g, step):
    x, dim = step.args[:2]
    return [g.node("Unsqueeze", [g.value(x), g.ints([dim % (x.dim() + 1)])])]


def _slice(g, value: str, starts, ends, axes, steps=None) -> str:
    inputs = [value, g.ints(starts), g.ints(ends), g.ints(axes)]
    if steps is not None:
        inputs.append(g.ints(steps))
    return g.node("Slice", inputs)


@translates("Index")
def _index(g, step):
    """Basic indexing: slices (Slice), ints (a one-wide Slice, then Squeeze) and None (Unsqueeze)."""
    x, index = step.args[:2]
    value = g.value(x)
    starts, ends, axes, steps, squeezed, inserted = [], [], [], [], [], []
    dim = out_dim = 0
    for item in index:
        if item is None:
            inserted.append(out_dim)
            out_dim += 1
            continue
        if isinstance(item, int):
            starts.append(item)
            ends.append(item + 1 if item != -1 else _INT64_MAX)
            axes.append(dim)
            steps.append(1)
            squeezed.append(dim)
        elif item != slice(None):
            starts.append(0 if item.start is None else item.start)
            ends.append(_INT64_MAX if item.stop is None else item.stop)
            axes.append(dim)
            steps.append(1 if item.step is None else item.step)
            out_dim += 1
        else:
            out_dim += 1
        dim += 1
    if axes:
        value = _slice(g, value, starts, ends, axes, steps)
    if squeezed:
        value = g.node("Squeeze", [value, g.ints(squeezed)])
    if inserted:
        value = g.node("Unsqueeze", [value, g.ints(inserted)])
    return [value if axes or inserted else g.node("Identity", [value])]


@translates("Select")
def _select(g, step):
    x, dim, index = step.args[:3]
    return [g.node("Gather", [g.value(x), g.scalar(index, int64)], axis=dim % x.dim())]


@translates("Narrow")
def _narrow(g, step):
    x, dim, start, length = step.args[:4]
    return [_slice(g, g.value(x), [start], [start + length], [dim % x.dim()])]


@translates("SplitViews")
def _split_views(g, step):
    x, dim, sizes, squeeze = step.args[:4]
    axis = dim % x.dim()
    value = g.value(x)
    if len(sizes) == 1:
        pieces = [g.node("Identity", [value])]
    else:
        pieces = g.node("Split", [value, g.ints(sizes)], outputs=len(sizes), axis=axis)
    if squeeze:
        pieces = [g.node("Squeeze", [p, g.ints([axis])]) for p in pieces]
    return pieces


@translates("_TimeSteps")
def _time_steps(g, step):
    """An RNN's input projection, one (batch, features) slice per time step."""
    (x,) = step.args[:1]
    n = x.shape[0]
    value = g.value(x)
    pieces = [value] if n == 1 else g.node("Split", [value, g.ints([1] * n)], outputs=n, axis=0)
    return [g.node("Squeeze", [p, g.ints([0])]) for p in pieces]


@translates("Cat")
def _cat(g, step):
    keep = step.params.get("keep")
    tensors = [t for i, t in enumerate(step.args) if keep is None or keep[i]]
    dtype = _out(step).dtype
    if len(tensors) == 1:
        return [g.node("Identity", [_operand(g, tensors[0], dtype)])]
    return [g.node("Concat", [_operand(g, t, dtype) for t in tensors], axis=step.params["dim"] % _out(step).dim())]


@translates("Flip")
def _flip(g, step):
    x = step.args[0]
    axes = _dims(step.params["dims"] if "dims" in step.params else step.args[1], x.dim())
    return [_slice(g, g.value(x), [-1] * len(axes), [-_INT64_MAX - 1] * len(axes), axes, [-1] * len(axes))]


@translates("Triangle")
def _triangle(g, step):
    x = step.args[0]
    upper, diagonal = step.params["upper"], step.params["diagonal"]
    return [g.node("Trilu", [g.value(x), g.scalar(diagonal, int64)], upper=int(upper))]


@translates("Clone")
def _clone(g, step):
    return [g.node("Identity", [_x(g, step)])]


@translates("ToCopy")
def _to_copy(g, step):
    x = step.args[0]
    out = _out(step)
    if out.dtype is x.dtype:
        return [g.node("Identity", [g.value(x)])]
    return [g.node("Cast", [g.value(x)], to=g.onnx_type(out.dtype))]


@translates("Copy")
def _copy(g, step):
    """``x.copy_(src)`` / ``fill_``: src in x's dtype, broadcast to x's shape."""
    x, source = step.args[:2]
    value = _operand(g, source, x.dtype)
    return [g.node("Expand", [value, g.node("Shape", [g.value(x)])])]


@translates("NanToNum")
def _nan_to_num(g, step):
    x = step.args[0]
    value = g.value(x)
    if not x.dtype.is_floating_point:
        return [g.node("Identity", [value])]
    info = finfo(x.dtype)
    nan, posinf, neginf = (step.params.get(k) for k in ("nan", "posinf", "neginf"))
    nan = 0.0 if nan is None else nan
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    value = g.node("Where", [g.node("IsNaN", [value]), g.scalar(nan, x.dtype), value])
    value = g.node("Where", [g.node("IsInf", [value], detect_negative=0), g.scalar(posinf, x.dtype), value])
    return [g.node("Where", [g.node("IsInf", [value], detect_positive=0), g.scalar(neginf, x.dtype), value])]


@translates("ConvTranspose")
def _conv_transpose(g, step):
    """The adjoint of the convolution with ``geometry``: its input is that convolution's output. What the
    windows reach past the result's end is padding to drop; a result longer than the windows reach (PyTorch's
    output_padding) is ONNX's output_padding."""
    x, weight, bias, geometry = step.args[:4]
    inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    reach = [e - p for e, p in zip(geometry.extent, geometry.padding)]
    attributes = {"kernel_shape": list(geometry.kernel), "strides": list(geometry.stride),
                  "pads": list(geometry.padding) + [max(0, r - n) for r, n in zip(reach, geometry.in_size)],
                  "output_padding": [max(0, n - r) for r, n in zip(reach, geometry.in_size)]}
    if any(d != 1 for d in geometry.dilation):
        attributes["dilations"] = list(geometry.dilation)
    return [g.node("ConvTranspose", inputs, group=geometry.groups, **attributes)]


@translates("Cumsum")
def _cumsum(g, step):
    x, dim = step.args[:2]
    dtype = _out(step).dtype
    return [g.node("CumSum", [_operand(g, x, dtype), g.scalar(dim % max(x.dim(), 1), int64)])]


@translates("Norm")
def _norm(g, step):
    x, p, dims, keepdim = step.args[:4]
    axes = _dims(dims, x.dim())
    value = g.value(x)
    if p == 2:
        return [g.reduce("ReduceL2", value, axes, keepdim)]
    if p == 1:
        return [g.reduce("ReduceL1", value, axes, keepdim)]
    if math.isinf(p):
        return [g.reduce("ReduceMax" if p > 0 else "ReduceMin", g.node("Abs", [value]), axes, keepdim)]
    if p > 0:
        powers = g.node("Pow", [g.node("Abs", [value]), g.scalar(p, x.dtype)])
        return [g.node("Pow", [g.reduce("ReduceSum", powers, axes, keepdim), g.scalar(1 / p, x.dtype)])]
    raise UnsupportedOperatorError(f"minitorch::Norm (p={p})", g.opset, None)


@translates("Topk")
def _topk(g, step):
    x, k, dim, largest = step.args[:4]
    values, indices = g.node("TopK", [g.value(x), g.ints([k])], outputs=2, axis=dim % x.dim(),
                             largest=int(largest), sorted=1)
    return [values, indices]


@translates("All", "Any")
def _all_any(g, step):
    """A min (all) or max (any) over the input as 0/1, back to bool."""
    x, dims, keepdim = step.args[:3]
    flags = g.node("Cast", [g.node("Cast", [g.value(x)], to=g.onnx_type(bool_dtype))], to=g.onnx_type(int64))
    axes = _dims(dims, x.dim())
    reduced = g.reduce("ReduceMin" if step.op.__name__ == "All" else "ReduceMax", flags, axes, keepdim) if axes \
        else flags
    return [g.node("Cast", [reduced], to=g.onnx_type(_out(step).dtype))]


@translates("Gather")
def _gather(g, step):
    """``torch.gather(x, dim, index)``: ONNX's GatherElements."""
    x, index, dim = step.args[:3]
    return [g.node("GatherElements", [g.value(x), _operand(g, index, int64)], axis=dim % max(x.dim(), 1))]
