"""The CPU backend: numpy arrays over numpy buffers."""

from __future__ import annotations

import math
import os

import numpy as np

from .. import _dtype
from .._device import CPU
from . import dlpack
from .array_backend import ArrayBackend
from .dtypes import BFLOAT16, finfo
from .torch_mt import TorchGenerator


class NumpyBackend(ArrayBackend):
    device_type = "cpu"

    def __init__(self):
        super().__init__(np, {_dtype.bfloat16: BFLOAT16})

    finfo = staticmethod(finfo)

    def normalize(self, dev):
        return CPU

    def memory_limit(self) -> int | None:
        """The machine's physical memory (with overcommit, a larger np.empty may "succeed" and the
        process be killed when it is touched)."""
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
            return None

    def sum(self, array, axis=None, keepdims=False, dtype=None):
        """``np.sum``, with float16/bfloat16/float32 added in float32 in a cascade (PyTorch's accuracy, see
        ``_cascade_sum``); float64, integers and bools are numpy's own sum, bit for bit."""
        out = array.dtype if dtype is None else np.dtype(dtype)
        if out.char not in _HALF_OR_SINGLE or array.dtype.char not in _HALF_OR_SINGLE:
            if array.dtype == BFLOAT16:  # bfloat16 to a wider dtype: numpy has no such loop, go through float32
                array = array.astype(np.float32)
            return np.sum(array, axis=axis, keepdims=keepdims, dtype=dtype)
        total = _float32_sum(array, axis, keepdims)
        return total if out.char == "f" else total.astype(out)

    def mean(self, array, axis=None, keepdims=False, dtype=None):
        """``np.mean`` over the same float32 cascade as ``sum``."""
        out = array.dtype if dtype is None else np.dtype(dtype)
        if out.char not in _HALF_OR_SINGLE or array.dtype.char not in _HALF_OR_SINGLE or array.size == 0:
            if array.dtype == BFLOAT16:
                array = array.astype(np.float32)
                return np.mean(array, axis=axis, keepdims=keepdims, dtype=dtype or np.float32).astype(out)
            return np.mean(array, axis=axis, keepdims=keepdims, dtype=dtype)
        total = _float32_sum(array, axis, keepdims)
        total = total / (array.size // total.size)
        return total if out.char == "f" else total.astype(out)

    def broadcast_to(self, array, shape):
        """``np.broadcast_to``; one value (a full sum's gradient) as a stride-0 window on it, made directly: numpy's
        function takes 2.4 us, the window 0.5."""
        if type(array) is np.ndarray and array.size == 1 and array.flags.c_contiguous:
            window = np.ndarray(shape, array.dtype, array, 0, (0,) * len(shape))
            window.flags.writeable = False
            return window
        return np.broadcast_to(array, shape)

    def as_strided(self, buffer, size, stride, offset):
        itemsize = buffer.itemsize
        if 0 in size:  # no elements: numpy wants the offset inside the buffer; the strides are kept (stride())
            offset = 0
        return np.ndarray(
            size,
            dtype=buffer.dtype,
            buffer=buffer,
            offset=offset * itemsize,
            strides=tuple(s * itemsize for s in stride),
        )

    @staticmethod
    def span_buffer(array, span):
        return np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))

    def data_ptr(self, array) -> int:
        return array.__array_interface__["data"][0]

    def to_numpy(self, array):
        return array

    def from_numpy(self, array):
        return array

    def is_native_array(self, obj) -> bool:
        return isinstance(obj, np.ndarray)

    def rng(self, seed):
        return TorchGenerator(seed)

    def from_dlpack(self, obj):
        return dlpack.import_(obj)

    def from_dlpack_capsule(self, capsule):
        """A bare DLPack capsule (``torch.utils.dlpack.to_dlpack``'s) of CPU memory, consumed once."""
        return dlpack.import_capsule(capsule)

    def to_dlpack(self, array, kwargs: dict):
        """``array.__dlpack__(**kwargs)`` (bfloat16 too: see dlpack.py)."""
        return dlpack.export(array, kwargs)

    def set_num_threads(self, n: int) -> None:
        from threadpoolctl import threadpool_limits

        global _limiter
        _limiter = threadpool_limits(limits=n)

    def get_num_threads(self) -> int:
        from threadpoolctl import threadpool_info

        counts = [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]
        return max(counts) if counts else 1


_limiter = None
_HALF_OR_SINGLE = "eEf"  # float16, bfloat16 (ml_dtypes' char), float32: summed in float32

_SEQUENTIAL = 512  # terms numpy may add one after another (relative error below 5e-6 even for 512 x 0.1)
_BLOCK = 128  # rows per partial sum when more would be added sequentially


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))


def _sequential_axes(x, axes: tuple) -> list:
    """The reduced axes numpy adds one row after another. Only its inner loop (the smallest stride, merged
    with reduced axes contiguous around it) is summed pairwise; the other reduced axes are accumulated
    sequentially, with an error growing with their length (``sum(0)`` of a tall matrix)."""
    shape, strides = x.shape, x.strides
    if x.flags.c_contiguous:  # the common case, quickly: the inner loop is the trailing reduced dims
        d = x.ndim - 1
        while d >= 0 and (shape[d] == 1 or d in axes):
            d -= 1
        return [a for a in axes if a < d and shape[a] > 1]
    inner, step = set(), None
    for d in _iteration_order(x, axes):
        if d not in axes or (step is not None and abs(strides[d]) != step):
            break
        inner.add(d)
        step = abs(strides[d]) * shape[d]
    return [d for d in axes if shape[d] > 1 and d not in inner]


def _iteration_order(x, axes: tuple) -> list:
    """The dims of ``x`` (size 1 left out) innermost first, as numpy's iterator orders them for a reduction
    (npyiter_find_best_axis_ordering): a stable insertion sort by stride, from C order, where a comparison
    between strides of which one is 0 (a broadcast input, the output's reduced dims) decides nothing."""
    out_strides, step = {}, 1
    for d in reversed(range(x.ndim)):
        out_strides[d] = 0 if d in axes else step
        step *= 1 if d in axes else x.shape[d]
    order = []
    for d in reversed(range(x.ndim)):  # C order, innermost first
        if x.shape[d] == 1:
            continue
        position = len(order)
        for i in reversed(range(len(order))):
            decided = [
                abs(a[d]) < abs(a[order[i]])
                for a in (x.strides, out_strides)
                if a[d] != 0 and a[order[i]] != 0
            ]
            if not decided:
                continue
            if not all(decided):
                break
            position = i
        order.insert(position, d)
    return order


def _float32_sum(array, axis, keepdims: bool):
    """The float32 sum of float16/float32 ``array``: numpy's own where it adds few terms sequentially."""
    if array.size > _SEQUENTIAL:
        axes = _axes(axis, array.ndim)
        sequential = _sequential_axes(array, axes)
        if sequential and math.prod(array.shape[d] for d in sequential) > _SEQUENTIAL:
            total = _cascade_sum(array, axes)
            return total if keepdims else total.squeeze(axes)
    return np.add.reduce(array, axis=axis, dtype=np.float32, keepdims=keepdims)


def _cascade_sum(x, axes: tuple):
    """Sum of float16/float32 ``x`` over ``axes`` (kept as size 1), in float32, adding at most ``_SEQUENTIAL``
    terms sequentially: a long sequential axis is cut into blocks, each block summed into a partial (one
    numpy pass at full speed, the result ``_BLOCK`` times smaller), then the partials the same way. The
    error grows like log(n), as in PyTorch's cascade sum, instead of like n (1e6 rows of 0.1 gave 100958)."""
    while True:
        sequential = _sequential_axes(x, axes)
        if math.prod(x.shape[d] for d in sequential) <= _SEQUENTIAL:
            return np.add.reduce(x, axis=axes, dtype=np.float32, keepdims=True)
        d = max(sequential, key=lambda a: x.shape[a])
        n = x.shape[d]
        if n <= _BLOCK:  # several short sequential axes: reduce one alone
            x = np.add.reduce(x, axis=d, dtype=np.float32, keepdims=True)
            continue
        cut = n - n % _BLOCK
        before = (slice(None),) * d
        blocks = x[before + (slice(0, cut),)].reshape(x.shape[:d] + (cut // _BLOCK, _BLOCK) + x.shape[d + 1 :])
        partials = np.add.reduce(blocks, axis=d + 1, dtype=np.float32)
        if cut < n:
            rest = np.add.reduce(x[before + (slice(cut, n),)], axis=d, dtype=np.float32, keepdims=True)
            partials = np.concatenate((partials, rest), axis=d)
        x = partials
