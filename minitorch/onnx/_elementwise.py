"""ONNX translations of the elementwise ops: arithmetic, math functions, comparisons, logical and bitwise ops,
``where``, ``clamp`` and the activations.
"""

from __future__ import annotations

import math

from .._dtype import bool as bool_dtype
from .._dtype import float64
from .._finfo import finfo
from ..tensor import Tensor
from ._translation import first_input, operand, output, registrar
from .errors import UnsupportedOperatorError

TRANSLATIONS: dict = {}
translates = registrar(TRANSLATIONS)


# elementwise ---------------------------------------------------------------------------------------------
_UNARY = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin",
          "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "tanh": "Tanh", "asinh": "Asinh",
          "acosh": "Acosh", "atanh": "Atanh", "sigmoid": "Sigmoid", "reciprocal": "Reciprocal", "erf": "Erf",
          "abs": "Abs", "relu": "Relu", "sign": "Sign", "floor": "Floor", "ceil": "Ceil"}


def _unary(onnx_op: str):
    def translate(g, step):
        return [g.node(onnx_op, [operand(g, step.args[0], output(step).dtype)])]

    return translate


for _name, _onnx_op in _UNARY.items():
    TRANSLATIONS[_name.capitalize()] = _unary(_onnx_op)


@translates("Rsqrt")
def _rsqrt(g, step):
    return [g.node("Reciprocal", [g.node("Sqrt", [operand(g, step.args[0], output(step).dtype)])])]


@translates("Square")
def _square(g, step):
    x = operand(g, step.args[0], output(step).dtype)
    return [g.node("Mul", [x, x])]


@translates("Log1p", "Expm1", "Log2", "Log10", "Exp2")
def _log_exp(g, step):
    dtype = output(step).dtype
    x = operand(g, step.args[0], dtype)
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
        dtype = output(step).dtype
        a, b = step.args[:2]
        alpha = step.params.get("alpha", step.args[2] if len(step.args) > 2 else 1)
        if alpha != 1:
            b = g.node("Mul", [operand(g, b, dtype), g.scalar(alpha, dtype)])
        else:
            b = operand(g, b, dtype)
        return [g.node(onnx_op, [operand(g, a, dtype), b])]

    return translate


TRANSLATIONS.update({"Add": _binary("Add"), "Sub": _binary("Sub"), "Mul": _binary("Mul"),
                     "Maximum": _binary("Max"), "Minimum": _binary("Min")})


@translates("Div", "FloorDivide")
def _div(g, step):
    dtype = output(step).dtype
    mode = step.params.get("rounding_mode", step.args[2] if len(step.args) > 2 else None)
    if mode is None:
        return [g.node("Div", [operand(g, step.args[0], dtype), operand(g, step.args[1], dtype)])]
    inner = dtype if dtype.is_floating_point else float64
    q = g.node("Div", [operand(g, step.args[0], inner), operand(g, step.args[1], inner)])
    if mode == "floor":
        q = g.node("Floor", [q])
    else:  # trunc: sign(q) * floor(|q|)
        q = g.node("Mul", [g.node("Sign", [q]), g.node("Floor", [g.node("Abs", [q])])])
    return [q if inner is dtype else g.node("Cast", [q], to=g.onnx_type(dtype))]


@translates("Remainder")
def _remainder(g, step):
    """Python's modulo (the divisor's sign): Mod for integers, a - floor(a / b) b for floats."""
    dtype = output(step).dtype
    a, b = (operand(g, v, dtype) for v in step.args[:2])
    if not dtype.is_floating_point:
        return [g.node("Mod", [a, b], fmod=0)]
    return [g.node("Sub", [a, g.node("Mul", [g.node("Floor", [g.node("Div", [a, b])]), b])])]


@translates("Pow")
def _pow(g, step):
    dtype = output(step).dtype
    return [g.node("Pow", [operand(g, step.args[0], dtype), operand(g, step.args[1], dtype)])]


@translates("Neg")
def _neg(g, step):
    return [g.node("Neg", [operand(g, step.args[0], output(step).dtype)])]


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
        out = g.node(onnx_op, [operand(g, a, dtype) for a in step.args[:2]])
        return [g.node("Not", [out]) if negate else out]

    return translate


TRANSLATIONS.update({"Eq": _comparison("Equal"), "Ne": _comparison("Equal", negate=True),
                     "Lt": _comparison("Less"), "Le": _comparison("LessOrEqual"), "Gt": _comparison("Greater"),
                     "Ge": _comparison("GreaterOrEqual")})


@translates("LogicalNot")
def _logical_not(g, step):
    return [g.node("Not", [operand(g, step.args[0], bool_dtype)])]


def _logical(onnx_op: str):
    def translate(g, step):
        return [g.node(onnx_op, [operand(g, a, bool_dtype) for a in step.args[:2]])]

    return translate


TRANSLATIONS.update({"LogicalAnd": _logical("And"), "LogicalOr": _logical("Or"), "LogicalXor": _logical("Xor")})


def _bitwise(bool_op: str, int_op: str):
    """On bool tensors the logical op; on integers ONNX's Bitwise* (opset 18)."""

    def translate(g, step):
        dtype = output(step).dtype
        operands = [operand(g, a, dtype) for a in step.args[:2] if a is not None]
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
    dtype = output(step).dtype
    condition = operand(g, condition, bool_dtype)
    return [g.node("Where", [condition, operand(g, a, dtype), operand(g, b, dtype)])]


@translates("Clamp", "Hardtanh")
def _clamp(g, step):
    dtype = output(step).dtype
    x = operand(g, step.args[0], dtype)
    low, high = step.args[1], step.args[2]
    if isinstance(low, Tensor) or isinstance(high, Tensor):
        if low is not None:
            x = g.node("Max", [x, operand(g, low, dtype)])
        if high is not None:
            x = g.node("Min", [x, operand(g, high, dtype)])
        return [x]
    return [g.node("Clip", [x, "" if low is None else g.scalar(low, dtype), "" if high is None else
                            g.scalar(high, dtype)])]


# activations ---------------------------------------------------------------------------------------------
@translates("Gelu")
def _gelu(g, step):
    dtype = output(step).dtype
    x = operand(g, step.args[0], dtype)
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
    x = operand(g, step.args[0], output(step).dtype)
    return [g.node("Mul", [x, g.node("Sigmoid", [x])])]


@translates("Mish")
def _mish(g, step):
    x = operand(g, step.args[0], output(step).dtype)
    if g.opset >= 18:
        return [g.node("Mish", [x])]
    return [g.node("Mul", [x, g.node("Tanh", [g.node("Softplus", [x])])])]


@translates("LeakyRelu")
def _leaky_relu(g, step):
    return [g.node("LeakyRelu", [first_input(g, step)], alpha=float(step.args[1]))]


@translates("Elu")
def _elu(g, step):
    dtype = output(step).dtype
    x = first_input(g, step)
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
    dtype = output(step).dtype
    x = first_input(g, step)
    beta, threshold = step.args[1:3]
    z = x if beta == 1 else g.node("Mul", [x, g.scalar(beta, dtype)])
    soft = g.node("Softplus", [z])
    if beta != 1:
        soft = g.node("Div", [soft, g.scalar(beta, dtype)])
    return [g.node("Where", [g.node("Greater", [z, g.scalar(threshold, dtype)]), x, soft])]


@translates("Hardsigmoid")
def _hardsigmoid(g, step):
    return [g.node("HardSigmoid", [first_input(g, step)], alpha=1 / 6, beta=0.5)]


@translates("Hardswish")
def _hardswish(g, step):
    return [g.node("HardSwish", [first_input(g, step)])]


@translates("Logsigmoid")
def _logsigmoid(g, step):
    return [g.node("Neg", [g.node("Softplus", [g.node("Neg", [first_input(g, step)])])])]


@translates("Softmax", "LogSoftmax")
def _softmax(g, step):
    return [g.node(step.op.__name__, [first_input(g, step)], axis=int(step.args[1]))]


@translates("Prelu")
def _prelu(g, step):
    x, weight = step.args[:2]
    slope = g.value(weight)
    if x.dim() >= 2 and weight.numel() > 1:  # one slope per channel (dim 1): (C, 1, ..., 1) broadcasts
        slope = g.node("Reshape", [slope, g.ints([-1] + [1] * (x.dim() - 2))])
    return [g.node("PRelu", [g.value(x), slope])]


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
