"""The ``meta`` device: tensors with shape, dtype and strides but no data.

A ``MetaArray`` answers the numpy protocols (``__array_ufunc__``, ``__array_function__``) by
computing only the result's shape and dtype. Ufuncs, reductions and matmul are inferred
analytically and allocate nothing; other numpy functions are evaluated on zero-stride stand-ins
(inputs cost nothing, the stand-in output is dropped at once). So a model with billions of
parameters can be built and run shape-only on ``meta``.
"""

from __future__ import annotations

import math

import numpy as np

from .._device import device
from .array_backend import ArrayBackend


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
        return MetaArray(_stand_in(self).reshape(shape).shape, self.dtype)

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
        raise RuntimeError("meta tensors have no data")

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
        if method == "__call__" and ufunc.signature is None:
            shape = np.broadcast_shapes(*(np.shape(_stand_in(x)) for x in inputs))
            dtypes = [x.dtype if isinstance(x, MetaArray) else x for x in inputs]
            dtype = kwargs.get("dtype") or _ufunc_result_dtype(ufunc, dtypes)
            results = tuple(MetaArray(shape, dtype) for _ in range(ufunc.nout))
        elif method == "at":
            return None
        else:  # reduce, accumulate, matmul: evaluate on zero-stride stand-ins
            result = getattr(ufunc, method)(*(_stand_in(x) for x in inputs), **kwargs)
            results = tuple(_from_stand_in(r) for r in (result if ufunc.nout > 1 else (result,)))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return results[0] if len(results) == 1 else results

    def __array_function__(self, func, types, args, kwargs):
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


def _ufunc_result_dtype(ufunc, dtypes):
    probes = [np.zeros((), d) if isinstance(d, np.dtype) else d for d in dtypes]
    with np.errstate(all="ignore"):
        return ufunc(*probes).dtype if ufunc.nout == 1 else ufunc(*probes)[0].dtype


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
        super().__init__(np)
        self.xp = _MetaModule()
        self.ndarray = MetaArray
        self._device = device("meta")

    def normalize(self, dev):
        return self._device

    def dtype_of(self, array):
        return self._from_array_dtype[array.dtype]

    def contiguous_buffer(self, array):
        return MetaArray((array.size,), array.dtype)

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

    def to_numpy(self, array):
        raise RuntimeError("meta tensors have no data: they cannot be copied to another device")

    def from_numpy(self, array):
        return MetaArray(array.shape, array.dtype)

    def is_native_array(self, obj) -> bool:
        return isinstance(obj, MetaArray)

    def rng(self, seed):
        return _MetaRng()


class _MetaRng:
    """Random functions on meta produce shapes, not numbers."""

    def __getattr__(self, name):
        def draw(*args, size=None, dtype=np.float64, **kwargs):
            return MetaArray(size if size is not None else (), dtype)

        return draw
