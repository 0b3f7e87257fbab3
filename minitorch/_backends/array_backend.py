"""What numpy and CuPy backends share: both expose the numpy API through ``xp``."""

from __future__ import annotations

from .. import _dtype
from .base import Backend


class _ErrstateVar:
    """``errstate`` behind a ContextVar-like set/reset (the slow, public fallback: about 1 µs)."""

    def __init__(self, xp):
        self.xp = xp

    def set(self, _):
        state = self.xp.errstate(all="ignore")
        state.__enter__()
        return state

    def reset(self, state) -> None:
        state.__exit__(None, None, None)


class ArrayBackend(Backend):
    """A Backend over a numpy-compatible array module; subclasses set ``xp`` and the few
    functions that differ (strided views, pointers, scatter-add, host transfers)."""

    def __init__(self, xp, extra_dtypes=None):
        """``extra_dtypes``: {minitorch dtype: array dtype} for dtypes numpy does not name (bfloat16)."""
        self.xp = xp
        self.ndarray = xp.ndarray
        self.quiet_fp_state = self._quiet_fp_state()
        self._to_array_dtype = {d: xp.dtype(d.name) for d in _dtype.ALL_DTYPES if d is not _dtype.bfloat16}
        self._to_array_dtype.update(extra_dtypes or {})
        self._from_array_dtype = {v: k for k, v in self._to_array_dtype.items()}
        self._from_array_dtype.update({v.char: k for k, v in self._to_array_dtype.items()})

    def _quiet_fp_state(self):
        """``(context variable, value)`` whose ``set``/``reset`` silence floating-point warnings
        around a kernel (PyTorch never warns on 1/0), or None when the library never warns.

        ``with np.errstate(all="ignore")`` costs about 1 µs, more than a small kernel. numpy >= 2
        keeps that state in one ContextVar; setting it to a prebuilt "ignore" value and resetting
        the token is what errstate does inside, for about 0.2 µs.
        """
        config = getattr(getattr(self.xp, "_core", None), "_ufunc_config", None)
        variable = getattr(config, "_extobj_contextvar", None)
        make = getattr(config, "_make_extobj", None)
        if variable is not None and make is not None:
            return variable, make(all="ignore")
        if hasattr(self.xp, "errstate"):
            return _ErrstateVar(self.xp), None
        return None

    # dtypes --------------------------------------------------------------------------------
    def array_dtype(self, dtype):
        try:
            return self._to_array_dtype[dtype]
        except KeyError:
            raise TypeError(f"{dtype} is not supported on the {self.device_type} device") from None

    def dtype_of(self, array):
        try:
            return self._from_array_dtype[array.dtype]
        except KeyError:
            raise TypeError(
                f"can't convert an array of type {array.dtype}; the supported types are: "
                + ", ".join(d.name for d in self._to_array_dtype)
            ) from None

    def reinterpret(self, buffer, array_dtype):
        """A 1-D ``buffer``'s bytes seen as ``array_dtype`` (complex64 <-> float32 pairs): no copy."""
        return buffer.view(array_dtype)

    def to_dlpack(self, array, kwargs: dict):
        """``array.__dlpack__(**kwargs)``; an array library predating the newer keywords gets ``stream`` only."""
        try:
            return array.__dlpack__(**kwargs)
        except TypeError:
            return array.__dlpack__(**({"stream": kwargs["stream"]} if "stream" in kwargs else {}))

    def finfo(self, array_dtype):
        """The limits of a floating array dtype (``xp.finfo``; the numpy backend adds bfloat16)."""
        return self.xp.finfo(array_dtype)

    # storage -------------------------------------------------------------------------------
    def contiguous_buffer(self, array):
        """``array``'s memory as a 1-D buffer when ``array`` is row-major; else None."""
        if array.flags.c_contiguous:
            return array.reshape(-1)
        return None

    def buffer_of(self, array):
        if not isinstance(array, self.ndarray):  # numpy ufuncs return scalars for 0-d inputs
            array = self.xp.asarray(array)
        buffer = self.contiguous_buffer(array)
        if buffer is not None:
            return buffer, array
        span = self.dense_span(array)
        if span is not None:
            return self.span_buffer(array, span), array
        array = self.xp.ascontiguousarray(array)
        return array.reshape(-1), array

    @staticmethod
    def dense_span(array):
        """Elements covered by a non-overlapping, gap-free array with non-negative strides."""
        itemsize = array.itemsize
        if any(s < 0 for s in array.strides):
            return None
        span = 1 + sum((n - 1) * s // itemsize for n, s in zip(array.shape, array.strides) if n)
        if array.size == 0 or span != array.size:
            return None
        return span

    # creation ------------------------------------------------------------------------------
    def asarray(self, data, dtype=None, copy=False):
        array_dtype = None if dtype is None else self.array_dtype(dtype)
        return self.xp.array(data, dtype=array_dtype) if copy else self.xp.asarray(data, dtype=array_dtype)

    def empty(self, shape, dtype):
        return self.xp.empty(shape, dtype=self.array_dtype(dtype))

    def zeros(self, shape, dtype):
        return self.xp.zeros(shape, dtype=self.array_dtype(dtype))

    def broadcast_to(self, array, shape):
        """A read-only broadcast of ``array`` to ``shape`` (a sum's gradient on arrays)."""
        return self.xp.broadcast_to(array, shape)

    def full(self, shape, value, dtype):
        return self.xp.full(shape, value, dtype=self.array_dtype(dtype))

    # selection -----------------------------------------------------------------------------
    def select_or_zero(self, condition, a, zero_where_true: bool):
        """``where(condition, 0, a)`` if ``zero_where_true`` else ``where(condition, a, 0)``, for a
        floating ``a``: the zeros are +0.0 and ``a``'s values keep their bits (NaN, -0.0).

        numpy's ``where`` branches per element, about 10x slower than a multiply on a random mask
        (ReLU's backward). ANDing ``a``'s bits with a mask of all-ones / all-zeros is as fast as a
        multiply and, unlike ``a * condition``, exact: ``NaN * 0`` would be NaN, ``-1 * 0`` -0.0."""
        xp = self.xp
        bits = xp.dtype(f"i{a.itemsize}")
        mask = condition.astype(bits)  # an array even when 0-dim (a ufunc would return a scalar)
        if zero_where_true:
            xp.subtract(mask, 1, out=mask)  # True -> 0, False -> -1 (all ones)
        else:
            xp.negative(mask, out=mask)  # True -> -1 (all ones), False -> 0
        a_bits = a.view(bits)
        out = mask if mask.shape == a_bits.shape else None  # else a broadcasts: a fresh result
        return xp.bitwise_and(a_bits, mask, out=out).view(a.dtype)

    # reductions ----------------------------------------------------------------------------
    def sum(self, array, axis=None, keepdims=False, dtype=None):
        """``xp.sum``; the numpy backend overrides it to add float16/float32 in a cascade."""
        return self.xp.sum(array, axis=axis, keepdims=keepdims, dtype=dtype)

    def mean(self, array, axis=None, keepdims=False, dtype=None):
        """``xp.mean``; the numpy backend overrides it to add float16/float32 in a cascade."""
        return self.xp.mean(array, axis=axis, keepdims=keepdims, dtype=dtype)

    # kernels that differ between array libraries ---------------------------------------------
    def index_add(self, target, index, values):
        """``target[index] += values`` where repeated indices all add up (numpy's add.at)."""
        self.xp.add.at(target, index, values)

    def synchronize(self) -> None:
        pass
