"""Every Tensor method and operator defined outside ``tensor.py``, in one table, installed once.

``tensor.py`` holds what a tensor *is* (geometry, storage, dtype/device, autograd state); the ops that
work on tensors live in their modules (``ops/``, ``creation``, ``random``, ...). This table says which
function each method name runs, so ``t * w`` is found here (``"__mul__"``) without reading the ops.
The package's ``__init__`` calls ``install()`` once. A new Tensor method is one line here; nothing else
assigns attributes of Tensor (tests/test_layers.py checks that).
"""

from __future__ import annotations

from . import _named_tensors, _tensor_str, _tensortype, sampling
from .autograd import tensor_hooks, view_history
from .autograd.api import tensor_backward
from .creation import _new_empty_strided, _new_factory, _new_full, _new_tensor, empty, legacy_new, ones, zeros
from .cuda import memory as cuda_memory
from .linalg import legacy
from .nn.functional import activation
from .ops import (
    arithmetic,
    blas,
    comparison,
    conversion,
    fast_path,
    histogram,
    indexing,
    inplace,
    pointwise,
    reduction,
    resize,
    shape,
    sorting,
    views,
)
from .ops import complex as complex_ops
from .ops.arguments import PYTHON_LEVEL, numpy_aliases
from .ops.inplace import make_inplace as _in_place
from .ops.inplace import run_inplace
from .quantization import copy as quantization_copy
from .quantization import quantize
from .quantization import views as quantization_views
from .quantization.qtensor import QTensor
from .random import multinomial
from .sparse import dispatch as sparse_dispatch
from .sparse import ops as sparse_ops
from .sparse.tensor import SparseTensor
from .tensor import Tensor

# operators -----------------------------------------------------------------------------------------------
_OPERAND_TYPES = (Tensor, bool, int, float, complex)


def _operand(other) -> bool:
    return isinstance(other, _OPERAND_TYPES) or hasattr(other, "dtype")


def _operator(op):
    """``t <op> other`` straight to the Op; another type of operand returns NotImplemented (Python then asks
    the other operand)."""

    def method(self, other):
        return op.apply(self, other) if isinstance(other, _OPERAND_TYPES) or _operand(other) else NotImplemented

    return method


def _reflected(op):
    """``other <op> t``."""

    def method(self, other):
        return op.apply(other, self) if isinstance(other, _OPERAND_TYPES) or _operand(other) else NotImplemented

    return method


def _fast(op, ufunc: str, reflected: bool = False):
    """The operator of ``op`` (``_operator``/``_reflected``) behind its fast path for plain float tensors."""
    return fast_path.binary(op, ufunc, (_reflected if reflected else _operator)(op), swap=reflected)


_mul = _fast(arithmetic.Mul, "multiply")


def _rtruediv(self, other):
    """``number / t`` is ``t.reciprocal() * number``, as PyTorch computes it: the rounding is PyTorch's, and
    backward reads the reciprocal (writing into t before backward is allowed)."""
    return _mul(self.reciprocal(), other) if _operand(other) else NotImplemented


def _floordiv(self, other):
    return arithmetic.FloorDivide.apply(self, other, rounding_mode="floor") if _operand(other) else NotImplemented


def _rfloordiv(self, other):
    return arithmetic.FloorDivide.apply(other, self, rounding_mode="floor") if _operand(other) else NotImplemented


def _augmented(method_name: str):
    """``t op= other``: the in-place method (``__iadd__`` is ``add_``)."""

    def method(self, other):
        return getattr(self, method_name)(other)

    method.__name__ = f"augmented_{method_name}"
    return method


def _augmented_bitwise(operator_name: str, op_name: str):
    """``t &= other`` and friends: the operator's result written into t (they have no ``bitwise_*_`` method)."""

    def method(self, other):
        return run_inplace(self, getattr(Tensor, operator_name), (other,), {}, op_name)

    return method


def _where(self, condition, other):
    """``t.where(condition, other)`` is ``where(condition, t, other)``."""
    return comparison.where(condition, self, other)


def _to_sparse_coo(self):
    return sparse_ops.to_sparse(self)


_A, _S, _M, _D = arithmetic.Add, arithmetic.Sub, arithmetic.Mul, arithmetic.Div
_C = comparison

# the table -----------------------------------------------------------------------------------------------
METHODS: dict[str, object] = {
    # what needs a layer above tensor.py: construction, conversion, printing, the graph
    "__new__": staticmethod(legacy_new), "to": conversion.to, "__repr__": _tensor_str.tensor_repr,
    "grad_fn": property(view_history.grad_fn, view_history.set_grad_fn), "backward": tensor_backward,
    "register_hook": tensor_hooks.register_hook, "retain_grad": tensor_hooks.retain_grad,
    "register_post_accumulate_grad_hook": tensor_hooks.register_post_accumulate_grad_hook,
    # Python operators
    # (the common ones through their fast path, ops/fast_path.py, which calls the general method otherwise)
    "__add__": _fast(_A, "add"), "__radd__": _fast(_A, "add", reflected=True), "__sub__": _fast(_S, "subtract"),
    "__rsub__": _fast(arithmetic.Rsub, "subtract", reflected=True),
    "__mul__": _mul, "__rmul__": _fast(_M, "multiply", reflected=True),
    "__truediv__": _fast(_D, "true_divide"), "__rtruediv__": _rtruediv,
    "__mod__": _operator(arithmetic.Remainder), "__rmod__": _reflected(arithmetic.Remainder),
    "__pow__": _operator(arithmetic.Pow), "__rpow__": _reflected(arithmetic.Pow),
    "__floordiv__": _floordiv, "__rfloordiv__": _rfloordiv,
    "__neg__": arithmetic.neg, "__pos__": arithmetic.positive, "__abs__": pointwise.abs,
    "__matmul__": blas._matmul_method, "__rmatmul__": blas._rmatmul,
    "__eq__": _operator(_C.eq.op), "__ne__": _operator(_C.ne.op), "__lt__": _operator(_C.lt.op),
    "__le__": _operator(_C.le.op), "__gt__": _operator(_C.gt.op), "__ge__": _operator(_C.ge.op),
    "__and__": _operator(_C.bitwise_and.op), "__rand__": _reflected(_C.bitwise_and.op),
    "__or__": _operator(_C.bitwise_or.op), "__ror__": _reflected(_C.bitwise_or.op),
    "__xor__": _operator(_C.bitwise_xor.op), "__rxor__": _reflected(_C.bitwise_xor.op),
    "__lshift__": _operator(_C.bitwise_left_shift.op), "__rlshift__": _reflected(_C.bitwise_left_shift.op),
    "__rshift__": _operator(_C.bitwise_right_shift.op), "__rrshift__": _reflected(_C.bitwise_right_shift.op),
    "__invert__": comparison._invert,
    "__iadd__": _augmented("add_"), "__isub__": _augmented("sub_"), "__imul__": _augmented("mul_"),
    "__itruediv__": _augmented("div_"), "__ifloordiv__": _augmented("floor_divide_"),
    "__imod__": _augmented("remainder_"), "__ipow__": _augmented("pow_"),
    "__iand__": _augmented_bitwise("__and__", "bitwise_and_"), "__ior__": _augmented_bitwise("__or__", "bitwise_or_"),
    "__ixor__": _augmented_bitwise("__xor__", "bitwise_xor_"),
    "__getitem__": indexing.getitem, "__setitem__": inplace.setitem,
    # ops/arithmetic.py
    "add": arithmetic.add, "sub": arithmetic.sub, "subtract": arithmetic.subtract, "mul": arithmetic.mul,
    "multiply": arithmetic.multiply, "div": arithmetic.div, "divide": arithmetic.divide,
    "true_divide": arithmetic.true_divide, "floor_divide": arithmetic.floor_divide, "remainder": arithmetic.remainder,
    "fmod": arithmetic.fmod, "pow": arithmetic.pow, "neg": arithmetic.neg, "negative": arithmetic.negative,
    "positive": arithmetic.positive,
    # ops/pointwise.py
    "exp": pointwise.exp, "exp2": pointwise.exp2, "expm1": pointwise.expm1, "log": pointwise.log,
    "log2": pointwise.log2, "log10": pointwise.log10, "log1p": pointwise.log1p, "sqrt": pointwise.sqrt,
    "rsqrt": pointwise.rsqrt, "sin": pointwise.sin, "cos": pointwise.cos, "tan": pointwise.tan,
    "asin": pointwise.asin, "acos": pointwise.acos, "atan": pointwise.atan, "sinh": pointwise.sinh,
    "cosh": pointwise.cosh, "tanh": pointwise.tanh, "asinh": pointwise.asinh, "acosh": pointwise.acosh,
    "atanh": pointwise.atanh, "sigmoid": pointwise.sigmoid, "reciprocal": pointwise.reciprocal, "erf": pointwise.erf,
    "erfinv": pointwise.erfinv, "erfc": pointwise.erfc, "lgamma": pointwise.lgamma, "digamma": pointwise.digamma,
    "i0": pointwise.i0, "sinc": pointwise.sinc, "deg2rad": pointwise.deg2rad, "rad2deg": pointwise.rad2deg,
    "frac": pointwise.frac, "square": pointwise.square, "abs": pointwise.abs, "relu": pointwise.relu,
    "sign": pointwise.sign, "sgn": pointwise.sgn, "floor": pointwise.floor, "ceil": pointwise.ceil,
    "trunc": pointwise.trunc, "polygamma": pointwise._polygamma_method, "logit": pointwise.logit,
    "hypot": pointwise.hypot, "copysign": pointwise.copysign, "addcmul": pointwise.addcmul,
    "addcdiv": pointwise.addcdiv, "arcsin": pointwise.arcsin, "arccos": pointwise.arccos, "arctan": pointwise.arctan,
    "arcsinh": pointwise.arcsinh, "arccosh": pointwise.arccosh, "arctanh": pointwise.arctanh,
    "absolute": pointwise.absolute, "fix": pointwise.fix, "round": pointwise.round,
    "nan_to_num": pointwise.nan_to_num, "clamp": pointwise.clamp, "clamp_min": pointwise.clamp_min,
    "clamp_max": pointwise.clamp_max, "clip": pointwise.clip, "maximum": pointwise.maximum,
    "minimum": pointwise.minimum, "fmax": pointwise.fmax, "fmin": pointwise.fmin, "atan2": pointwise.atan2,
    "arctan2": pointwise.arctan2, "logaddexp": pointwise.logaddexp, "logaddexp2": pointwise.logaddexp2,
    "xlogy": pointwise.xlogy, "lerp": pointwise.lerp,
    # ops/comparison.py
    "eq": _C.eq, "ne": _C.ne, "lt": _C.lt, "le": _C.le, "gt": _C.gt, "ge": _C.ge, "greater": _C.greater,
    "greater_equal": _C.greater_equal, "less": _C.less, "less_equal": _C.less_equal, "not_equal": _C.not_equal,
    "logical_and": _C.logical_and, "logical_or": _C.logical_or, "logical_xor": _C.logical_xor,
    "logical_not": _C.logical_not, "bitwise_and": _C.bitwise_and, "bitwise_or": _C.bitwise_or,
    "bitwise_xor": _C.bitwise_xor, "bitwise_not": _C.bitwise_not, "bitwise_left_shift": _C.bitwise_left_shift,
    "bitwise_right_shift": _C.bitwise_right_shift, "where": _where, "masked_fill": _C.masked_fill,
    "isnan": _C.isnan, "isinf": _C.isinf, "isposinf": _C.isposinf, "isneginf": _C.isneginf, "isfinite": _C.isfinite,
    "signbit": _C.signbit, "isclose": _C.isclose, "allclose": _C.allclose, "equal": _C.equal,
    # ops/reduction.py
    "sum": reduction.sum, "mean": reduction.mean, "prod": reduction.prod, "sum_to_size": reduction.sum_to_size,
    "cumsum": reduction.cumsum, "cumprod": reduction.cumprod, "cummax": reduction.cummax, "cummin": reduction.cummin,
    "logcumsumexp": reduction.logcumsumexp, "max": reduction.max, "min": reduction.min, "amax": reduction.amax,
    "amin": reduction.amin, "aminmax": reduction.aminmax, "argmax": reduction.argmax, "argmin": reduction.argmin,
    "var": reduction.var, "std": reduction.std, "norm": reduction.norm, "logsumexp": reduction.logsumexp,
    "dist": reduction.dist, "all": reduction.all, "any": reduction.any, "count_nonzero": reduction.count_nonzero,
    # ops/sorting.py
    "sort": sorting.sort, "argsort": sorting.argsort, "msort": sorting.msort, "topk": sorting.topk,
    "kthvalue": sorting.kthvalue, "median": sorting.median, "mode": sorting.mode, "unique": sorting.unique,
    # _named_tensors.py: dimension names
    "names": property(_named_tensors.get_names, _named_tensors.set_names_property),
    "has_names": _named_tensors.has_names, "rename": _named_tensors.rename, "rename_": _named_tensors.rename_,
    "refine_names": _named_tensors.refine_names, "align_to": _named_tensors.align_to,
    "align_as": _named_tensors.align_as,
    # ops/views.py (flatten and unflatten also by name, from _named_tensors.py)
    "view": views.view, "reshape": views.reshape, "view_as": views.view_as, "reshape_as": views.reshape_as,
    "flatten": _named_tensors.flatten, "unflatten": _named_tensors.unflatten, "permute": views.permute,
    "transpose": views.transpose,
    "swapaxes": views.transpose, "swapdims": views.transpose, "t": views.t, "movedim": views.movedim,
    "moveaxis": views.movedim, "expand": views.expand, "expand_as": views.expand_as, "squeeze": views.squeeze,
    "unsqueeze": views.unsqueeze, "narrow": views.narrow, "select": views.select, "diagonal": views.diagonal,
    "as_strided": views.as_strided, "unbind": views.unbind, "split": views.split,
    "split_with_sizes": views.split_with_sizes, "chunk": views.chunk, "tensor_split": views.tensor_split,
    "unfold": views.unfold, "hsplit": views.hsplit, "vsplit": views.vsplit, "dsplit": views.dsplit,
    "ravel": views.ravel, "_view_scatter": views.view_scatter, "_replace_region": views.replace_region,
    "T": property(views._T), "mT": property(views._mT),
    # ops/shape.py
    "repeat": shape.repeat, "tile": shape.tile, "flip": shape.flip, "fliplr": shape.fliplr, "flipud": shape.flipud,
    "roll": shape.roll, "tril": shape.tril, "triu": shape.triu, "broadcast_to": shape.broadcast_to,
    "diag": shape.diag, "diag_embed": shape.diag_embed, "trace": shape.trace,
    "repeat_interleave": shape.repeat_interleave, "diff": shape.diff,
    # ops/histogram.py and ops/resize.py
    "bincount": histogram.bincount, "histc": histogram.histc, "histogram": histogram.histogram,
    "resize_": resize.resize_, "resize_as_": resize.resize_as_, "resize": resize.resize,
    # ops/indexing.py
    "gather": indexing.gather, "scatter": indexing.scatter, "scatter_add": indexing.scatter_add,
    "scatter_reduce": indexing.scatter_reduce, "index_put": indexing.index_put, "index_select": indexing.index_select,
    "index_add": indexing.index_add, "index_fill": indexing.index_fill, "index_copy": indexing.index_copy,
    "masked_select": indexing.masked_select, "masked_scatter": indexing.masked_scatter, "take": indexing.take,
    "take_along_dim": indexing.take_along_dim, "nonzero": indexing.nonzero, "argwhere": indexing.argwhere,
    "put": indexing.put,
    # ops/blas.py
    "matmul": blas.matmul, "mm": blas.mm, "bmm": blas.bmm, "mv": blas.mv, "dot": blas.dot, "vdot": blas.vdot,
    "inner": blas.inner, "outer": blas.outer, "ger": blas.outer, "addmm": blas.addmm, "addmv": blas.addmv,
    "addr": blas.addr, "baddbmm": blas.baddbmm, "addbmm": blas.addbmm, "kron": blas.kron, "cross": blas.cross,
    # linalg/legacy.py: the old names of linalg functions
    "det": legacy.det, "logdet": legacy.logdet, "slogdet": legacy.slogdet, "inverse": legacy.inverse,
    "svd": legacy.svd, "cholesky": legacy.cholesky, "qr": legacy.qr, "matrix_power": legacy.matrix_power,
    "pinverse": legacy.pinverse,
    # ops/complex.py
    "real": property(complex_ops.real), "imag": property(complex_ops.imag), "H": property(complex_ops._H),
    "mH": property(complex_ops._mH), "view_as_real": complex_ops.view_as_real,
    "view_as_complex": complex_ops.view_as_complex, "conj": complex_ops.conj,
    "conj_physical": complex_ops.conj_physical, "resolve_conj": complex_ops.resolve_conj,
    "resolve_neg": complex_ops.resolve_neg, "is_conj": complex_ops.is_conj, "is_neg": complex_ops.is_neg,
    "angle": complex_ops.angle, "adjoint": complex_ops.adjoint, "conj_physical_": _in_place("conj_physical"),
    # ops/conversion.py
    "clone": conversion.clone, "contiguous": conversion.contiguous,
    # creation.py, random.py and sampling.py
    "new_empty": _new_factory(empty), "new_empty_strided": _new_empty_strided, "new_zeros": _new_factory(zeros),
    "new_ones": _new_factory(ones),
    "new_full": _new_full, "new_tensor": _new_tensor, "new": _tensortype.new,
    "bernoulli": sampling.bernoulli, "multinomial": multinomial,
    # nn/functional/activation.py
    "softmax": activation.torch_softmax, "log_softmax": activation.torch_log_softmax,
    # ops/inplace.py: writes into self (the out-of-place op, then CopySlices when self is a view)
    "copy_": inplace.copy_, "fill_": inplace.fill_, "zero_": inplace.zero_, "index_put_": inplace.index_put_,
    # sampling.py: in-place draws from a generator (PyTorch's CPU streams)
    "uniform_": sampling.uniform_, "normal_": sampling.normal_, "bernoulli_": sampling.bernoulli_,
    "random_": sampling.random_, "exponential_": sampling.exponential_, "geometric_": sampling.geometric_,
    "log_normal_": sampling.log_normal_, "cauchy_": sampling.cauchy_,
    "add_": _in_place("add"), "sub_": _in_place("sub"), "mul_": _in_place("mul"), "div_": _in_place("div"),
    "true_divide_": _in_place("true_divide"), "floor_divide_": _in_place("floor_divide"),
    "remainder_": _in_place("remainder"), "fmod_": _in_place("fmod"), "pow_": _in_place("pow"),
    "neg_": _in_place("neg"), "exp_": _in_place("exp"), "exp2_": _in_place("exp2"), "expm1_": _in_place("expm1"),
    "log_": _in_place("log"), "log2_": _in_place("log2"), "log10_": _in_place("log10"), "log1p_": _in_place("log1p"),
    "sqrt_": _in_place("sqrt"), "rsqrt_": _in_place("rsqrt"), "abs_": _in_place("abs"), "sign_": _in_place("sign"),
    "sin_": _in_place("sin"), "cos_": _in_place("cos"), "tan_": _in_place("tan"), "asin_": _in_place("asin"),
    "acos_": _in_place("acos"), "atan_": _in_place("atan"), "atan2_": _in_place("atan2"), "sinh_": _in_place("sinh"),
    "cosh_": _in_place("cosh"), "tanh_": _in_place("tanh"), "asinh_": _in_place("asinh"),
    "acosh_": _in_place("acosh"), "atanh_": _in_place("atanh"), "sigmoid_": _in_place("sigmoid"),
    "relu_": _in_place("relu"), "clamp_": _in_place("clamp"), "clip_": _in_place("clip"),
    "reciprocal_": _in_place("reciprocal"), "square_": _in_place("square"), "erf_": _in_place("erf"),
    "round_": _in_place("round"), "floor_": _in_place("floor"), "ceil_": _in_place("ceil"),
    "trunc_": _in_place("trunc"), "frac_": _in_place("frac"), "lerp_": _in_place("lerp"),
    "masked_fill_": _in_place("masked_fill"), "index_add_": _in_place("index_add"),
    "index_fill_": _in_place("index_fill"), "scatter_": _in_place("scatter"),
    "scatter_add_": _in_place("scatter_add"), "index_copy_": _in_place("index_copy"),
    "nan_to_num_": _in_place("nan_to_num"), "logical_not_": _in_place("logical_not"),
    "bitwise_not_": _in_place("bitwise_not"), "fill_diagonal_": _in_place("fill_diagonal"),
    "erfinv_": _in_place("erfinv"), "clamp_min_": _in_place("clamp_min"), "clamp_max_": _in_place("clamp_max"),
    "xlogy_": _in_place("xlogy"), "fmax_": _in_place("fmax"), "fmin_": _in_place("fmin"),
    "hypot_": _in_place("hypot"), "logaddexp_": _in_place("logaddexp"), "erfc_": _in_place("erfc"),
    "lgamma_": _in_place("lgamma"), "digamma_": _in_place("digamma"), "polygamma_": _in_place("polygamma"),
    "i0_": _in_place("i0"), "sinc_": _in_place("sinc"), "logit_": _in_place("logit"),
    "deg2rad_": _in_place("deg2rad"), "rad2deg_": _in_place("rad2deg"), "copysign_": _in_place("copysign"),
    "addcmul_": _in_place("addcmul"), "addcdiv_": _in_place("addcdiv"),
    **{name + "_": _in_place(name) for name in (
        "sgn", "fix", "addmm", "addmv", "addr", "addbmm", "baddbmm", "cumsum", "cumprod", "tril", "triu", "put",
        "masked_scatter", "scatter_reduce", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
        "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")},
    "arcsinh_": _in_place("asinh"), "arccosh_": _in_place("acosh"), "arctanh_": _in_place("atanh"),
    "arctan2_": _in_place("atan2"), "greater_": _in_place("gt"), "greater_equal_": _in_place("ge"),
    "less_": _in_place("lt"), "less_equal_": _in_place("le"), "not_equal_": _in_place("ne"),
    "subtract_": _in_place("sub"), "multiply_": _in_place("mul"), "divide_": _in_place("div"),
    "negative_": _in_place("neg"), "absolute_": _in_place("abs"), "arcsin_": _in_place("asin"),
    "arccos_": _in_place("acos"), "arctan_": _in_place("atan"),
    # ops/inplace.py: in-place view ops (a new geometry for self, no element written)
    "t_": inplace.t_, "unsqueeze_": inplace.unsqueeze_, "squeeze_": inplace.squeeze_,
    "transpose_": inplace.transpose_, "swapdims_": inplace.transpose_, "swapaxes_": inplace.transpose_,
    "as_strided_": inplace.as_strided_,
    # sparse and quantized layouts: on a strided tensor
    "to_sparse": sparse_ops.to_sparse, "to_sparse_coo": _to_sparse_coo, "to_dense": sparse_ops.to_dense,
    "sparse_mask": sparse_ops.sparse_mask, "sparse_dim": sparse_dispatch._sparse_dim_dense,
    "dense_dim": sparse_dispatch._dense_dim_dense,
    **{name: sparse_dispatch._not_sparse(name) for name in sparse_dispatch.SPARSE_ONLY},  # coalesce, values, ...
    "dequantize": quantize.dequantize,
    # cuda/memory.py: page-locked host memory
    "pin_memory": cuda_memory.pin_memory, "is_pinned": cuda_memory.is_pinned,
}

# methods the sparse and quantized subclasses define differently
SPARSE_METHODS: dict[str, object] = {
    "coalesce": sparse_ops.coalesce, "to_dense": sparse_ops.to_dense, "to_sparse": sparse_ops.to_sparse,
    "sparse_mask": sparse_ops.sparse_mask, "_accumulate_into": sparse_ops.accumulate_into,
    "values": sparse_ops.values,
}
QUANTIZED_METHODS: dict[str, object] = {
    "dequantize": quantize.dequantize, "to": quantization_views.quantized_to, "copy_": quantization_copy.copy_,
}


def install() -> None:
    """Put the table's functions on the classes (``minitorch/__init__.py`` calls this once)."""
    for cls, methods in ((Tensor, METHODS), (SparseTensor, SPARSE_METHODS), (QTensor, QUANTIZED_METHODS)):
        for name, function in methods.items():
            setattr(cls, name, function)
    # x.sum(axis=0, keepdims=True): numpy's keyword names, which PyTorch's argument parser accepts
    for name, method in list(vars(Tensor).items()):
        if not name.startswith("_") and name not in PYTHON_LEVEL and callable(method) and not isinstance(method, type):
            setattr(Tensor, name, numpy_aliases(method, name))

