"""Creating tensors: from data (tensor, as_tensor, from_numpy) and factories (zeros, arange, ...)."""

from __future__ import annotations

import math

from . import _dtype
from ._device import CPU, as_device
from .backends import backend_for
from .storage import Storage
from .tensor import Tensor, from_array


def _backend_and_device(device):
    dev = as_device(device)
    backend = backend_for(dev)
    return backend, backend.normalize(dev)


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)) or (len(size) == 1 and hasattr(size[0], "__len__")):
        size = tuple(size[0])
    shape = tuple(int(n) for n in size)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return shape


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _contains_tensors(data) -> bool:
    if isinstance(data, Tensor):
        return True
    if isinstance(data, (list, tuple)) and data:
        return any(_contains_tensors(x) for x in data)
    return False


def _to_python(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_to_python(x) for x in data]
    return data


def _infer_dtype(array, backend, data) -> _dtype.dtype:
    """Python floats become the default dtype; numpy arrays keep theirs."""
    inferred = backend.dtype_of(array)
    if inferred is _dtype.float64 and not hasattr(data, "dtype"):
        return _dtype.get_default_dtype()
    return inferred


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor that copies ``data`` (nested lists, scalars, numpy/CuPy arrays, tensors)."""
    if isinstance(data, Tensor):
        result = data.detach().to(device=device or data.device, dtype=dtype or data.dtype, copy=True)
        return _finish(result, requires_grad)
    backend, dev = _backend_and_device(device)
    cpu = backend_for(CPU)
    if _contains_tensors(data):
        data = _to_python(data)
    if backend.is_native_array(data):
        array = data
    elif cpu.is_native_array(data) or not hasattr(data, "__dlpack__"):
        try:
            array = cpu.asarray(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"tensor(): could not build a tensor from {type(data).__name__}: {exc}") from None
        if array.dtype.kind not in "biuf":
            raise TypeError(f"tensor(): can't convert data of type {array.dtype} (expected numbers or bools)")
    else:
        array = backend.from_dlpack(data)
    target = dtype or _infer_dtype(array, cpu if cpu.is_native_array(array) else backend, data)
    if cpu.is_native_array(array) and backend is not cpu:
        array = backend.from_numpy(array)
    array = array.astype(backend.array_dtype(target), copy=True)
    return _finish(from_array(array, backend, dev), requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with ``data`` when dtype and device allow."""
    if isinstance(data, Tensor):
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    backend, dev = _backend_and_device(device)
    if backend.is_native_array(data) and (dtype is None or backend.dtype_of(data) is dtype):
        return _wrap_shared(data, backend, dev)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray) -> Tensor:
    """A CPU tensor sharing memory with a numpy array: writes through either show in the other."""
    cpu = backend_for(CPU)
    if not cpu.is_native_array(ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are "
            "not currently supported. (You can probably work around this by making a copy of your array "
            " with array.copy().) "
        )
    return _wrap_shared(ndarray, cpu, CPU)


def from_dlpack(ext_tensor) -> Tensor:
    """Zero-copy import of any DLPack producer (numpy, CuPy, PyTorch, JAX, ...)."""
    kind, index = ext_tensor.__dlpack_device__() if hasattr(ext_tensor, "__dlpack_device__") else (1, 0)
    dev = CPU if int(kind) == 1 else as_device(f"cuda:{int(index)}")
    backend = backend_for(dev)
    return _wrap_shared(backend.from_dlpack(ext_tensor), backend, backend.normalize(dev))


def _wrap_shared(array, backend, dev) -> Tensor:
    buffer, wrapped = backend.buffer_of(array)
    if wrapped is not array:  # overlapping or gapped strides: numpy could not be wrapped in place
        raise ValueError("from_numpy: the array's memory has gaps or overlaps; pass array.copy()")
    t = object.__new__(Tensor)
    t._array = array
    t._storage = Storage(buffer, backend, dev, backend.dtype_of(array))
    t._offset = 0
    t._requires_grad = False
    t.grad_fn = None
    t._output_nr = 0
    t._meta = None
    return t


# factories ---------------------------------------------------------------------------------------


def _factory(make, size, dtype, device, requires_grad, default=None):
    backend, dev = _backend_and_device(device)
    dtype = dtype or default or _dtype.get_default_dtype()
    return _finish(from_array(make(backend, _shape(size), dtype), backend, dev), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, memory_format=None, out=None) -> Tensor:
    return _factory(lambda b, s, d: b.empty(s, d), size, dtype, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    return _factory(lambda b, s, d: b.zeros(s, d), size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    return _factory(lambda b, s, d: b.full(s, 1, d), size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value) if isinstance(fill_value, (bool, int, float)) else None
    return _factory(lambda b, s, d: b.full(s, fill_value, d), (tuple(size),), dtype, device, requires_grad)


def _like(input: Tensor, dtype, device):
    return dtype or input.dtype, device or input.device


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None) -> Tensor:
    dtype, device = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(x, int) for x in (start, end, step)) else _dtype.get_default_dtype()
    backend, dev = _backend_and_device(device)
    count = max(0, math.ceil((end - start) / step))
    xp = backend.xp
    array = (xp.arange(count, dtype=backend.array_dtype(_dtype.float64)) * step + start) if dtype.is_floating_point else (
        xp.arange(start, end, step, dtype=backend.array_dtype(_dtype.int64))
    )
    return _finish(from_array(array.astype(backend.array_dtype(dtype)), backend, dev), requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    array = backend.xp.linspace(float(start), float(end), int(steps)).astype(backend.array_dtype(dtype))
    return _finish(from_array(array, backend, dev), requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    array = backend.xp.logspace(float(start), float(end), int(steps), base=base).astype(backend.array_dtype(dtype))
    return _finish(from_array(array, backend, dev), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    array = backend.xp.eye(n, m if m is not None else n, dtype=backend.array_dtype(dtype))
    return _finish(from_array(array, backend, dev), requires_grad)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full((), value, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


# Tensor.new_* use the tensor's dtype and device by default.
def _new_factory(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        return factory(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    method.__name__ = "new_" + factory.__name__
    return method


Tensor.new_empty = _new_factory(empty)
Tensor.new_zeros = _new_factory(zeros)
Tensor.new_ones = _new_factory(ones)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor

__all__ = ['tensor', 'as_tensor', 'from_numpy', 'from_dlpack', 'empty', 'zeros', 'ones', 'full', 'empty_like', 'zeros_like', 'ones_like', 'full_like', 'arange', 'linspace', 'logspace', 'eye', 'scalar_tensor']
