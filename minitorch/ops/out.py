"""``out=``: every torch-namespace function that PyTorch gives an ``out`` argument gets it here, once.

The op runs as usual, then its result is written into ``out`` (resized if its shape differs, as
PyTorch does with a warning; cast if the dtype allows). A write into ``out`` is an in-place write:
it bumps ``out``'s version counter. As in PyTorch, ``out=`` refuses to take part in autograd.
"""

from __future__ import annotations

import functools
import warnings

from .. import _dtype
from .._names import out_names
from .._names import state as names_state
from ..autograd import grad_mode
from ..tensor import Tensor

_LEGACY = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
           "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

# The functions (by name in the minitorch namespace) that accept out=.
FUNCTIONS_WITH_OUT = (
    # elementwise
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "pow", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "abs", "absolute", "sign", "sgn", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "arctan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "sigmoid", "reciprocal", "square", "erf",
    "erfinv", "round", "floor", "ceil", "trunc", "frac", "clamp", "clip", "maximum", "minimum", "fmax", "fmin",
    "lerp", "logaddexp", "logaddexp2", "xlogy", "nan_to_num", "where", "erfc", "lgamma", "digamma", "polygamma",
    "i0", "sinc", "logit", "deg2rad", "rad2deg", "hypot", "copysign", "addcmul", "addcdiv",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "isnan", "isinf", "isfinite",
    # reductions and scans
    "sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "std", "var", "norm", "logsumexp", "cumsum",
    "cumprod", "cummax", "cummin", "logcumsumexp", "all", "any", "max", "min", "sort", "topk", "median", "kthvalue",
    # shapes, indexing, products
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "tril", "triu", "diag",
    "gather", "index_select", "masked_select", "take", "take_along_dim", "nonzero",
    "matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger", "addmm", "addmv", "baddbmm", "tensordot", "kron",
)


def write_out(out: Tensor, result: Tensor, op_name: str) -> Tensor:
    """Copy ``result`` into ``out`` as PyTorch's out= kernels do."""
    if names_state.active and (out._names is not None or result._names is not None):
        out_names(out, result)  # named tensors: out takes the computed names, or must already have them
    if grad_mode.state.enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{op_name}(): functions with out=... arguments don't support automatic differentiation, but one of "
            "the arguments requires grad."
        )
    if out.device != result.device:
        raise RuntimeError(f"{op_name}(): expected out tensor on {result.device}, but got one on {out.device}")
    if _dtype.category_of(result.dtype) > _dtype.category_of(out.dtype):
        raise RuntimeError(
            f"result type {_LEGACY[result.dtype.name]} can't be cast to the desired output type "
            f"{_LEGACY[out.dtype.name]}"
        )
    if out.shape != result.shape:
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does "
                f"not match the required output shape {list(result.shape)}. This behavior is deprecated, and in a "
                "future PyTorch release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        resized = result.detach().to(out.dtype, copy=True)
        out.data = resized
        out._bump_version()
        return out
    with grad_mode.no_grad():
        out.copy_(result)
    return out


def with_out(function, name: str):
    """``function`` taking an extra keyword ``out`` (a tensor, or a tuple for multi-output ops)."""

    @functools.wraps(function)
    def wrapper(*args, out=None, **kwargs):
        result = function(*args, **kwargs)
        if out is None:
            return result
        if isinstance(result, tuple):
            if not isinstance(out, (tuple, list)) or len(out) != len(result):
                raise TypeError(f"{name}(): out= must be a tuple of {len(result)} tensors")
            for o, r in zip(out, result):
                write_out(o, r, name)
            return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
        return write_out(out, result, name)

    return wrapper


def install(namespace: dict) -> None:
    """Give the namespace's functions listed in FUNCTIONS_WITH_OUT their ``out=`` argument."""
    for name in FUNCTIONS_WITH_OUT:
        function = namespace.get(name)
        if function is not None and callable(function):
            namespace[name] = with_out(function, name)
