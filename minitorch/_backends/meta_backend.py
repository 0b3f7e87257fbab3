"""The ``meta`` device: tensors with shape, dtype and strides but no data.

A ``MetaArray`` answers the numpy protocols (``__array_ufunc__``, ``__array_function__``) by
computing only the result's shape and dtype. Ufuncs (dtypes from ``ufunc.resolve_dtypes``),
reductions, scans, matmul, where/concatenate/stack and reshape are inferred analytically and
allocate nothing; other numpy functions are evaluated on zero-stride stand-ins (inputs cost
nothing, the stand-in output is dropped at once). So a model with billions of parameters can be
built and run shape-only on ``meta``.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from .. import _dtype
from .._device import device
from .array_backend import ArrayBackend
from .dtypes import BFLOAT16


def _contiguous_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


class MetaArray:
    """Shape, dtype and strides of an array that has no memory."""

    __slots__ = ("shape", "dtype", "strides", "offset")

    def __init__(self, shape, dtype, strides=None, offset=0):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.strides = strides if strides is not None else _contiguous_strides(self.shape, self.dtype.itemsize)
        self.offset = offset

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    T = property(lambda self: self.transpose())

    @property
    def flags(self):
        return _Flags(self.strides == _contiguous_strides(self.shape, self.itemsize))

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __len__(self):
        return self.shape[0]

    # numpy-style methods used by kernels ----------------------------------------------------
    def astype(self, dtype, copy=True):
        return MetaArray(self.shape, dtype)

    def copy(self, order="C"):
        return MetaArray(self.shape, self.dtype)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return MetaArray(_infer_reshape(self.shape, tuple(shape)), self.dtype)

    def ravel(self):
        return self.reshape(-1)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = axes or tuple(reversed(range(self.ndim)))
        return MetaArray([self.shape[a] for a in axes], self.dtype, tuple(self.strides[a] for a in axes))

    def __getitem__(self, index):
        return _from_stand_in(_stand_in(self)[index])

    def __setitem__(self, index, value):
        pass

    def item(self):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def tolist(self):
        raise RuntimeError("Cannot copy out of meta tensor; no data!")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("meta tensors have no data to convert to a numpy array")

    def __getattr__(self, name):
        # sum, mean, max, argmax, ... as methods: route through the numpy function
        func = getattr(np, name, None)
        if func is None:
            raise AttributeError(name)
        return lambda *args, **kwargs: func(self, *args, **kwargs)

    # numpy protocols ------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if method == "at":
            return None
        if method == "__call__" and ufunc is np.matmul:
            results = (MetaArray(_matmul_shape(*inputs), kwargs.get("dtype") or _ufunc_result_dtype(ufunc, inputs)),)
        elif method == "__call__" and ufunc.signature is None:
            shape = np.broadcast_shapes(*(np.shape(x) if not isinstance(x, MetaArray) else x.shape for x in inputs))
            dtypes = kwargs.get("dtype") or _ufunc_result_dtype(ufunc, inputs)
            dtypes = dtypes if isinstance(dtypes, tuple) else (dtypes,) * ufunc.nout
            results = tuple(MetaArray(shape, d) for d in dtypes)
        elif method in ("reduce", "accumulate") and len(inputs) == 1:
            results = (_reduce_like(ufunc, method, inputs[0], kwargs),)
        else:  # outer, reduceat, other gufuncs: evaluate on zero-stride stand-ins
            result = getattr(ufunc, method)(*(_stand_in(x) for x in inputs), **kwargs)
            results = tuple(_from_stand_in(r) for r in (result if ufunc.nout > 1 else (result,)))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return results[0] if len(results) == 1 else results

    def __array_function__(self, func, types, args, kwargs):
        rule = _SHAPE_RULES.get(func)
        if rule is not None:
            return rule(func, args, kwargs)
        result = func(*_map(_stand_in, args), **_map_dict(_stand_in, kwargs))
        return _map(_from_stand_in, result) if isinstance(result, (tuple, list)) else _from_stand_in(result)

    # arithmetic operators map onto ufuncs
    def __add__(self, o): return np.add(self, o)  # noqa: E704
    def __radd__(self, o): return np.add(o, self)  # noqa: E704
    def __sub__(self, o): return np.subtract(self, o)  # noqa: E704
    def __rsub__(self, o): return np.subtract(o, self)  # noqa: E704
    def __mul__(self, o): return np.multiply(self, o)  # noqa: E704
    def __rmul__(self, o): return np.multiply(o, self)  # noqa: E704
    def __truediv__(self, o): return np.true_divide(self, o)  # noqa: E704
    def __rtruediv__(self, o): return np.true_divide(o, self)  # noqa: E704
    def __neg__(self): return np.negative(self)  # noqa: E704
    def __matmul__(self, o): return np.matmul(self, o)  # noqa: E704
    def __pow__(self, o): return np.power(self, o)  # noqa: E704
    def __lt__(self, o): return np.less(self, o)  # noqa: E704
    def __gt__(self, o): return np.greater(self, o)  # noqa: E704
    def __eq__(self, o): return np.equal(self, o)  # noqa: E704
    __hash__ = None


class _Flags:
    __slots__ = ("c_contiguous",)

    def __init__(self, c_contiguous):
        self.c_contiguous = c_contiguous


def _ufunc_result_dtype(ufunc, inputs):
    """The output dtype(s) of ``ufunc(*inputs)`` from dtypes alone (Python scalars stay weak, NEP 50)."""
    operands = tuple(x.dtype if hasattr(x, "dtype") else type(x) for x in inputs)
    try:
        dtypes = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)[ufunc.nin:]
    except (TypeError, ValueError, AttributeError):  # e.g. object operands: ask numpy with 0-d probes
        probes = [np.zeros((), x.dtype) if isinstance(x, MetaArray) else x for x in inputs]
        with np.errstate(all="ignore"):
            result = ufunc(*probes)
        dtypes = tuple(np.asarray(r).dtype for r in (result if ufunc.nout > 1 else (result,)))
    return dtypes[0] if len(dtypes) == 1 else dtypes


def _infer_reshape(shape: tuple, new_shape: tuple) -> tuple:
    size = math.prod(shape)
    if new_shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in new_shape:
        known = math.prod(n for n in new_shape if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {new_shape}")
        new_shape = tuple(size // known if n == -1 else n for n in new_shape)
    if math.prod(new_shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {new_shape}")
    return new_shape


def _matmul_shape(a, b) -> tuple:
    """numpy.matmul's output shape: 1-D operands are promoted then squeezed, batch dims broadcast."""
    a_shape, b_shape = np.shape(a) if not isinstance(a, MetaArray) else a.shape, (
        np.shape(b) if not isinstance(b, MetaArray) else b.shape
    )
    if not a_shape or not b_shape:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a_shape if len(a_shape) == 1 else a_shape
    b2 = b_shape + (1,) if len(b_shape) == 1 else b_shape
    if a2[-1] != b2[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(n?,k),(k,m?)->(n?,m?) (size {b2[-2]} is different from {a2[-1]})"
        )
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    return batch + (a2[-2],) * (len(a_shape) > 1) + (b2[-1],) * (len(b_shape) > 1)


def _normalize_axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(a + ndim if a < 0 else a for a in (int(x) for x in axes)))


def _reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _probe(x: MetaArray):
    """A one-element array of ``x``'s dtype and number of dims: what the dtype rules are asked on."""
    return np.zeros((1,) * x.ndim, x.dtype)


def _reduce_like(ufunc, method: str, x, kwargs) -> MetaArray:
    """``ufunc.reduce`` / ``ufunc.accumulate`` on a MetaArray: shape by rule, dtype from a 1-element probe."""
    probe_kwargs = {k: v for k, v in kwargs.items() if k in ("axis", "dtype", "keepdims")}
    if not isinstance(x, MetaArray):
        return _from_stand_in(getattr(ufunc, method)(x, **kwargs))
    with np.errstate(all="ignore"):
        dtype = np.asarray(getattr(ufunc, method)(_probe(x), **probe_kwargs)).dtype
    if method == "accumulate":
        return MetaArray(x.shape, dtype)
    axis = kwargs.get("axis", 0)
    return MetaArray(_reduced_shape(x.shape, _normalize_axes(axis, x.ndim), kwargs.get("keepdims", False)), dtype)


def _reduction_rule(func, args, kwargs):
    """np.sum/mean/max/argmax/...: the result shape follows ``axis``/``keepdims``; the dtype is what
    numpy gives on a one-element probe with the same arguments."""
    bound = inspect.signature(func).bind(*args, **kwargs)
    x = bound.arguments.pop(next(iter(bound.arguments)))
    if not isinstance(x, MetaArray):
        return _from_stand_in(func(*_map(_stand_in, args), **_map_dict(_stand_in, kwargs)))
    options = {k: v for k, v in bound.arguments.items() if k not in ("out", "where")}
    with np.errstate(all="ignore"):
        dtype = np.asarray(func(_probe(x), **options)).dtype
    axis = options.get("axis")
    if func in (np.argmax, np.argmin) and axis is None and not options.get("keepdims", False):
        return MetaArray((), dtype)
    keepdims = bool(options.get("keepdims", False))
    return MetaArray(_reduced_shape(x.shape, _normalize_axes(axis, x.ndim), keepdims), dtype)


def _scan_rule(func, args, kwargs):
    """np.cumsum/cumprod: same shape (flattened when ``axis`` is None), dtype from a probe."""
    bound = inspect.signature(func).bind(*args, **kwargs)
    x = bound.arguments.pop(next(iter(bound.arguments)))
    options = {k: v for k, v in bound.arguments.items() if k != "out"}
    dtype = np.asarray(func(_probe(x), **options)).dtype
    return MetaArray(x.shape if options.get("axis") is not None else (x.size,), dtype)


def _dtype_and_shape(x):
    if isinstance(x, MetaArray):
        return x.dtype, x.shape
    if isinstance(x, (bool, int, float)):
        return x, ()
    array = np.asarray(x)
    return array.dtype, array.shape


def _where_rule(func, args, kwargs):
    if len(args) != 3:
        return _from_stand_in(func(*_map(_stand_in, args)))
    (_, cond_shape), (x_dtype, x_shape), (y_dtype, y_shape) = (_dtype_and_shape(a) for a in args)
    return MetaArray(np.broadcast_shapes(cond_shape, x_shape, y_shape), np.result_type(x_dtype, y_dtype))


def _join_rule(func, args, kwargs):
    """np.concatenate / np.stack: sizes add up (or a new axis appears); dtypes promote."""
    bound = inspect.signature(func).bind(*args, **kwargs)
    arrays = [_dtype_and_shape(a) for a in bound.arguments["arrays"]]
    axis = bound.arguments.get("axis", 0)
    dtype = bound.arguments.get("dtype") or np.result_type(*(d for d, _ in arrays))
    shapes = [s for _, s in arrays]
    if func is np.stack:
        if len({s for s in shapes}) != 1:
            raise ValueError("all input arrays must have the same shape")
        ndim = len(shapes[0]) + 1
        axis = axis + ndim if axis < 0 else axis
        return MetaArray(shapes[0][:axis] + (len(shapes),) + shapes[0][axis:], dtype)
    if axis is None:
        return MetaArray((sum(math.prod(s) for s in shapes),), dtype)
    ndim = len(shapes[0])
    axis = axis + ndim if axis < 0 else axis
    for s in shapes[1:]:
        if len(s) != ndim or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must match exactly"
            )
    return MetaArray(shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1 :], dtype)


_SHAPE_RULES = {
    **{f: _reduction_rule for f in (
        np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.any, np.all, np.argmax, np.argmin,
        np.std, np.var, np.nansum, np.nanmean, np.nanmax, np.nanmin, np.count_nonzero,
    )},
    np.cumsum: _scan_rule,
    np.cumprod: _scan_rule,
    np.where: _where_rule,
    np.concatenate: _join_rule,
    np.stack: _join_rule,
}


def _stand_in(x):
    """A zero-stride numpy array of ``x``'s shape and dtype: it owns one element, no more."""
    if isinstance(x, MetaArray):
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return x


def _from_stand_in(x):
    if isinstance(x, np.ndarray):
        return MetaArray(x.shape, x.dtype)
    if isinstance(x, np.generic):
        return MetaArray((), x.dtype)
    return x


def _map(f, seq):
    if isinstance(seq, (tuple, list)):
        return type(seq)(_map(f, x) for x in seq)
    return f(seq)


def _map_dict(f, d):
    return {k: _map(f, v) for k, v in d.items()}


class _MetaModule:
    """``xp`` for meta: numpy's API, with creation functions returning MetaArrays."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def empty(shape, dtype=float):
        return MetaArray(shape if isinstance(shape, (tuple, list)) else (shape,), dtype)

    zeros = ones = empty

    @staticmethod
    def full(shape, value, dtype=None):
        return MetaArray(shape if isinstance(shape, (tuple, list)) else (shape,), dtype or np.asarray(value).dtype)

    @staticmethod
    def arange(start, stop=None, step=1, dtype=None):
        if stop is None:
            start, stop = 0, start
        count = max(0, math.ceil((stop - start) / step))
        return MetaArray((count,), dtype or np.result_type(start, stop, step))

    @staticmethod
    def eye(n, m=None, k=0, dtype=float):
        return MetaArray((n, n if m is None else m), dtype)

    @staticmethod
    def ascontiguousarray(a, dtype=None):
        return MetaArray(a.shape, dtype or a.dtype) if isinstance(a, MetaArray) else np.ascontiguousarray(a, dtype)

    @staticmethod
    def asarray(a, dtype=None):
        if isinstance(a, MetaArray):
            return a if dtype is None else a.astype(dtype)
        return np.asarray(a, dtype)


class MetaBackend(ArrayBackend):
    device_type = "meta"

    def __init__(self):
        super().__init__(np, {_dtype.bfloat16: BFLOAT16})
        self.xp = _MetaModule()
        self.ndarray = MetaArray
        self._device = device("meta")

    def normalize(self, dev):
        return self._device

    def dtype_of(self, array):
        return self._from_array_dtype[array.dtype]

    def contiguous_buffer(self, array):
        return MetaArray((array.size,), array.dtype)

    def reinterpret(self, buffer, array_dtype):
        return MetaArray((buffer.size * buffer.itemsize // np.dtype(array_dtype).itemsize,), array_dtype)

    def buffer_of(self, array):
        if not isinstance(array, MetaArray):
            array = _from_stand_in(np.asarray(array))
        return MetaArray((array.size,), array.dtype), MetaArray(array.shape, array.dtype)

    def as_strided(self, buffer, size, stride, offset):
        itemsize = buffer.itemsize
        return MetaArray(size, buffer.dtype, tuple(s * itemsize for s in stride), offset * itemsize)

    def data_ptr(self, array) -> int:
        return 0

    def asarray(self, data, dtype=None, copy=False):
        array = np.asarray(data, dtype=None if dtype is None else self.array_dtype(dtype))
        return MetaArray(array.shape, array.dtype)

    def empty(self, shape, dtype):
        return MetaArray(shape, self.array_dtype(dtype))

    zeros = empty

    def full(self, shape, value, dtype):
        return MetaArray(shape, self.array_dtype(dtype))

    def index_add(self, target, index, values):
        pass

    def select_or_zero(self, condition, a, zero_where_true: bool):
        """No bits to mask on meta: the result's shape and dtype."""
        return MetaArray(np.broadcast_shapes(condition.shape, a.shape), a.dtype)

    def to_numpy(self, array):
        raise RuntimeError(
            "Cannot copy out of meta tensor; no data! Meta tensors have only a shape and dtype: create the "
            "tensor on a real device (or use torch.empty_like(t, device='cpu')) to get values."
        )

    def from_numpy(self, array):
        return MetaArray(array.shape, array.dtype)

    def is_native_array(self, obj) -> bool:
        return isinstance(obj, MetaArray)

    def rng(self, seed):
        return _MetaRng(seed)


class _MetaRng:
    """Random draws on meta produce shapes and dtypes, not numbers (``torch_mt.TorchGenerator``'s methods)."""

    initial_seed = 0

    def __init__(self, seed: int = 0):
        self.initial_seed = seed

    def uniform(self, n, dtype, low=0.0, high=1.0):
        return MetaArray((n,), dtype)

    def normal(self, n, dtype, mean=0.0, std=1.0, contiguous=True):
        return MetaArray((n,), dtype)

    def exponential(self, n, dtype, lambd=1.0):
        return MetaArray((n,), dtype)

    def random_from_to(self, n, low, high):
        return MetaArray((n,), np.int64)

    def random_bits(self, n, dtype):
        return MetaArray((n,), dtype)

    def randperm(self, n):
        return MetaArray((n,), np.int64)

    def bernoulli_scalar(self, n, p):
        return MetaArray((n,), np.bool_)

    def bernoulli_tensor(self, p):
        return MetaArray((p.size,), np.bool_)

    def geometric(self, n, p):
        return MetaArray((n,), np.float64)

    log_normal = cauchy = geometric

    def poisson(self, rates):
        return MetaArray(rates.shape, np.float64)

    def standard_gamma(self, alphas, single: bool):
        return MetaArray(alphas.shape, np.float64)

    def binomial(self, counts, probs, single: bool):
        return MetaArray(counts.shape, np.float64)

    def multinomial(self, weights, num_samples, replacement):
        return MetaArray((weights.shape[0], num_samples), np.int64)

    def get_state(self) -> bytes:
        return b""

    def set_state(self, payload: bytes) -> None:
        raise ValueError("the meta device has no random state to set")
