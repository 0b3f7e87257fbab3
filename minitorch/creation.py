"""Creating tensors: from data (tensor, as_tensor, from_numpy, from_dlpack) and factories
(empty, zeros, ones, full, eye, arange, linspace, logspace, the ``*_like`` and ``Tensor.new_*`` forms).

``tensor`` always copies; ``as_tensor``, ``from_numpy`` and ``from_dlpack`` share memory with their
source when they can, so writes through either side show in the other (the seeds' zero-copy lesson).
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings

from . import _dtype, _trace_state
from ._backends import backend_for
from ._backends.dtypes import kind as array_kind
from ._device import CPU, as_device
from ._names import propagate, set_names
from .memory_format import checked as checked_memory_format
from .memory_format import contiguous_format, format_strides, preserve_format
from .storage import Storage
from .tensor import Tensor, from_array


def _backend_and_device(device):
    dev = as_device(device)
    backend = backend_for(dev)
    return backend, backend.normalize(dev)


def _shape(size, name: str = "size") -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(torch.Size([2, 3]))`` all mean shape (2, 3)."""
    if len(size) == 1 and not isinstance(size[0], int) and hasattr(size[0], "__len__"):
        size = tuple(size[0])
    shape = []
    for i, n in enumerate(size):
        try:
            shape.append(operator.index(n))
        except TypeError:
            raise TypeError(
                f"{name}(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(n).__name__} at pos {i}"
            ) from None
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {shape}")
    return tuple(shape)


def check_allocation(name: str, shape: tuple, dtype, backend) -> None:
    """Refuse a size the device cannot hold before asking the backend for it (RuntimeError, as PyTorch's
    allocator): beyond int64 bytes, "Storage size calculation overflowed"; beyond the device's memory,
    "can't allocate memory"."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes >= 2**63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    limit = backend.memory_limit()
    if limit is not None and nbytes > limit:
        raise RuntimeError(
            f"{name}(): can't allocate memory: you tried to allocate {nbytes} bytes (size {list(shape)}, "
            f"{dtype}) but the {backend.device_type} device has {limit} bytes"
        )


def _finish(t: Tensor, requires_grad: bool, names=None) -> Tensor:
    if _trace_state.tracer is not None:  # minitorch.compile is tracing: a constant made from Python values
        _trace_state.factory(t)
    if requires_grad:
        t.requires_grad_(True)
    if names is not None:  # named tensors (minitorch/_names.py)
        set_names(t, names)
    return t


# tensor(): dtype inference --------------------------------------------------------------------


def _is_typed_leaf(x) -> bool:
    """Tensors and numpy/CuPy arrays or scalars inside a list carry their own dtype."""
    return isinstance(x, Tensor) or (hasattr(x, "dtype") and hasattr(x, "shape"))


def _walk_typed(data, found: list) -> None:
    if isinstance(data, (list, tuple)):
        for x in data:
            _walk_typed(x, found)
    elif _is_typed_leaf(data):
        found.append(data)


def _leaf_dtype(x, cpu) -> _dtype.dtype:
    if isinstance(x, Tensor):
        return x.dtype
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        return cpu.dtype_of(x)  # numpy/CuPy arrays and numpy scalars
    return _dtype.scalar_dtype(x)


def _infer_nested_dtype(data, cpu) -> _dtype.dtype | None:
    """PyTorch's rule for sequences: promote the dtypes of all leaves (floats count as the default)."""
    result = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        try:
            d = _leaf_dtype(x, cpu)
        except TypeError:
            return None  # let numpy's conversion report the bad element
        result = d if result is None else _dtype.promote_types(result, d)
    return result


def _to_python(data):
    """Nested lists of Python scalars: tensors inside a list must hold exactly one element."""
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_to_python(x) for x in data]
    if hasattr(data, "tolist"):
        return data.tolist()
    return data


def _ragged_message(data) -> str | None:
    """PyTorch's message for a ragged nested list: the first dim where lengths disagree."""

    def sizes(x):
        out = []
        while isinstance(x, (list, tuple)):
            out.append(len(x))
            if not x:
                break
            x = x[0]
        return out

    expected = sizes(data)

    def check(x, dim):
        if dim >= len(expected):
            return f"expected a number at dim {dim} (got a sequence)" if isinstance(x, (list, tuple)) else None
        if not isinstance(x, (list, tuple)):
            return f"expected sequence of length {expected[dim]} at dim {dim} (got {type(x).__name__})"
        if len(x) != expected[dim]:
            return f"expected sequence of length {expected[dim]} at dim {dim} (got {len(x)})"
        for item in x:
            message = check(item, dim + 1)
            if message:
                return message
        return None

    return check(data, 0)


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
           names=None) -> Tensor:
    """A new tensor that copies ``data`` (nested lists, scalars, numpy/CuPy arrays, tensors).

    Without ``dtype``: Python floats give the default dtype, ints ``int64``, bools ``bool``; arrays
    and tensors keep theirs, and a list mixing them promotes (PyTorch's inference)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        result = data.detach().to(device=device or data.device, dtype=dtype or data.dtype, copy=True)
        if names is not None and result._names is not None:  # a named tensor keeps its names; others are an error
            propagate(result, names)
        return _finish(result, requires_grad, names)
    backend, dev = _backend_and_device(device)
    cpu = backend_for(CPU)
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(data, (list, tuple)) and _has_strings(data):
        first = data
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        if isinstance(first, str):  # PyTorch takes a leading string for one more dimension of the nesting
            raise ValueError("too many dimensions 'str'")
        raise TypeError("new(): invalid data type 'str'")
    target = dtype
    if isinstance(data, (list, tuple)):
        typed: list = []
        _walk_typed(data, typed)
        if typed:
            target = target or _infer_nested_dtype(data, cpu)
            data = _to_python(data)
    if backend.is_native_array(data) and backend is not cpu:
        array = data
    elif cpu.is_native_array(data) or not hasattr(data, "__dlpack__"):
        try:
            array = cpu.asarray(data)
        except (ValueError, TypeError) as exc:
            message = _ragged_message(data) if isinstance(data, (list, tuple)) else None
            raise ValueError(message or f"tensor(): could not convert {type(data).__name__}: {exc}") from None
        if array.dtype.kind == "O":  # a None, a dict, an object among the numbers
            odd = next(x for x in array.flat if not isinstance(x, numbers.Number))
            raise RuntimeError(f"Could not infer dtype of {type(odd).__name__}")
        if array_kind(array.dtype) not in "biufc":
            raise TypeError(f"tensor(): can't convert data of type {array.dtype} (expected numbers or bools)")
    else:
        array = backend.from_dlpack(data)
    if target is None:
        target = backend.dtype_of(array) if backend.is_native_array(array) else cpu.dtype_of(array)
        if target is _dtype.float64 and not hasattr(data, "dtype"):
            target = _dtype.get_default_dtype()  # Python floats
        elif target is _dtype.complex128 and not hasattr(data, "dtype"):
            target = _dtype.default_complex_dtype()  # Python complex numbers
    if cpu.is_native_array(array) and backend is not cpu:
        array = backend.from_numpy(array)
    array = array.astype(backend.array_dtype(target), copy=True)
    return _finish(from_array(array, backend, dev), requires_grad, names)


def _has_strings(data) -> bool:
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            return True
        if isinstance(x, (list, tuple)):
            stack.extend(x)
    return False


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with ``data`` (a tensor or array) when dtype and device allow."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device, dtype=dtype or data.dtype)
    backend, dev = _backend_and_device(device)
    if backend.is_native_array(data):
        shared = _wrap_shared(data, backend, dev)
        return shared if dtype is None or shared.dtype is dtype else shared.to(dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray) -> Tensor:
    """A CPU tensor sharing memory with a numpy array: writes through either show in the other."""
    cpu = backend_for(CPU)
    if not cpu.is_native_array(ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _wrap_shared(ndarray, cpu, CPU)


def from_dlpack(ext_tensor, *, device=None, copy: bool | None = None) -> Tensor:
    """Zero-copy import of any DLPack producer (PyTorch, numpy, CuPy, JAX, ...) or a bare DLPack capsule:
    the tensor shares the producer's memory. ``copy=True`` copies; ``device`` moves (a copy, which
    ``copy=False`` refuses)."""
    if hasattr(ext_tensor, "__dlpack__"):  # minitorch's own tensors too, refused where PyTorch refuses
        kind, index = ext_tensor.__dlpack_device__() if hasattr(ext_tensor, "__dlpack_device__") else (1, 0)
        dev = CPU if int(kind) == 1 else as_device(f"cuda:{int(index)}")
        backend = backend_for(dev)
        result = _wrap_shared(backend.from_dlpack(ext_tensor), backend, backend.normalize(dev))
    elif device is not None or copy is not None:
        raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
    else:  # a capsule (torch.utils.dlpack.to_dlpack's): CPU memory only, as numpy reads it
        cpu = backend_for(CPU)
        return _wrap_shared(cpu.from_dlpack_capsule(ext_tensor), cpu, CPU)
    if device is not None and as_device(device) != result.device:
        if copy is False:
            raise ValueError(f"cannot move DLPack tensor from device {result.device} to {as_device(device)} "
                             "without copying. Set copy=None or copy=True.")
        return result.to(device)
    return result.clone() if copy else result


def _wrap_shared(array, backend, dev) -> Tensor:
    """A tensor whose ``_array`` is ``array`` itself, over a 1-D buffer spanning its memory."""
    itemsize = array.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are "
            "not currently supported. (You can probably work around this by making a copy of your array "
            " with array.copy().) "
        )
    if any(s % itemsize for s in array.strides):
        raise ValueError(
            f"given numpy array strides not a multiple of the element byte size ({itemsize}). "
            "Copy the numpy array to reallocate the memory."
        )
    dtype = backend.dtype_of(array)
    if hasattr(array, "flags") and getattr(array.flags, "writeable", True) is False:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This "
            "means writing to this tensor will result in undefined behavior.",
            UserWarning,
            stacklevel=3,
        )
    if array.flags.c_contiguous:
        buffer = array.reshape(-1)
    else:
        span = 0 if array.size == 0 else 1 + sum((n - 1) * s // itemsize for n, s in zip(array.shape, array.strides))
        buffer = backend.span_buffer(array, span)
    return Tensor._make(array, Storage(buffer, backend, dev, dtype))


# factories ---------------------------------------------------------------------------------------


def _factory(make, size, dtype, device, requires_grad, name, names=None):
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    shape = _shape(size, name)
    check_allocation(name, shape, dtype, backend)
    return _finish(from_array(make(backend, shape, dtype), backend, dev), requires_grad, names)


def empty(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False,
          memory_format=contiguous_format, names=None) -> Tensor:
    """Uninitialized memory (whatever the allocator returns), laid out in ``memory_format``."""
    if memory_format is contiguous_format:
        return _factory(lambda b, s, d: b.empty(s, d), size, dtype, device, requires_grad, "empty", names)
    checked_memory_format("empty", memory_format)
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    strides = format_strides(memory_format, _shape(size, "empty"))
    return _factory(lambda b, s, d: _strided_empty(b, s, d, strides), size, dtype, device, requires_grad, "empty",
                    names)


def _strided_empty(backend, shape: tuple, dtype, strides: tuple | None):
    """An uninitialized array of ``shape`` with the given element ``strides`` (None: row-major) over a fresh buffer."""
    if strides is None:
        return backend.empty(shape, dtype)
    return backend.as_strided(backend.empty((math.prod(shape),), dtype), shape, strides, 0)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """Uninitialized memory seen through ``stride``: the storage holds exactly the elements the strides reach
    (one past the largest offset), so gaps and overlaps are allowed, as in PyTorch."""
    shape = _shape(size, "empty_strided")
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                           f"({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(stride)}")
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    check_allocation("empty_strided", (extent,), dtype, backend)
    buffer = backend.empty((extent,), dtype)
    array = backend.as_strided(buffer, shape, stride, 0)  # (from_array would copy a layout with gaps or overlaps)
    return _finish(Tensor._make(array, Storage(buffer, backend, dev, dtype)), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, names=None) -> Tensor:
    return _factory(lambda b, s, d: b.zeros(s, d), size, dtype, device, requires_grad, "zeros", names)


def ones(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, names=None) -> Tensor:
    return _factory(lambda b, s, d: b.full(s, 1, d), size, dtype, device, requires_grad, "ones", names)


def _scalar(value):
    return value.item() if isinstance(value, Tensor) else value


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False,
         names=None) -> Tensor:
    """Every element ``fill_value``; without ``dtype`` a bool/int/float value gives bool/int64/default."""
    fill_value = _scalar(fill_value)
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    size = (size,) if isinstance(size, int) else tuple(size)
    return _factory(lambda b, s, d: b.full(s, fill_value, d), (size,), dtype, device, requires_grad, "full", names)


# kind -> function(input, factory): ``empty_like``/``zeros_like``/... of a tensor of that kind, given the same
# factory for plain tensors (vmap's BatchedTensors: the factory on the whole batch, wrapped as the input is)
LIKE_IMPLEMENTATIONS: dict = {}


def _like(input: Tensor, make, dtype, device, requires_grad, memory_format=preserve_format, name: str = "empty_like"):
    """A new tensor shaped like ``input``; with PyTorch's default preserve_format a dense permuted layout
    (e.g. ``x.t()``) is kept, so ``empty_like(x.t()).stride() == x.t().stride()``; another memory format
    gives that layout."""
    if not input._dense and input._kind in LIKE_IMPLEMENTATIONS:
        return LIKE_IMPLEMENTATIONS[input._kind](
            input, lambda plain: _like(plain, make, dtype, device, requires_grad, memory_format, name))
    dtype = dtype or input.dtype
    backend, dev = _backend_and_device(device if device is not None else input.device)
    shape, order = input.shape, _dense_order(input)
    if memory_format is not None and memory_format is not preserve_format:
        strides = format_strides(checked_memory_format(name, memory_format), tuple(shape))
        array = _strided_empty(backend, tuple(shape), dtype, strides)
        array[...] = make(backend, (), dtype)
        return _finish(from_array(array, backend, dev), requires_grad, input._names)
    if order is None:
        array = make(backend, tuple(shape), dtype)
    else:
        array = make(backend, tuple(shape[d] for d in order), dtype)
        inverse = sorted(range(len(order)), key=order.__getitem__)
        array = array.transpose(inverse)
    return _finish(from_array(array, backend, dev), requires_grad, input._names)


def _dense_order(t: Tensor) -> list | None:
    """The dims from outermost to innermost when ``t`` is dense, non-overlapping and not row-major."""
    if t.is_contiguous() or t.dim() < 2:
        return None
    strides, shape = t.stride(), t.shape
    order = sorted(range(t.dim()), key=lambda d: -strides[d])
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    return order


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=preserve_format) -> Tensor:
    return _like(input, lambda b, s, d: b.empty(s, d), dtype, device, requires_grad, memory_format, "empty_like")


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=preserve_format) -> Tensor:
    return _like(input, lambda b, s, d: b.zeros(s, d), dtype, device, requires_grad, memory_format, "zeros_like")


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=preserve_format) -> Tensor:
    return _like(input, lambda b, s, d: b.full(s, 1, d), dtype, device, requires_grad, memory_format, "ones_like")


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=preserve_format) -> Tensor:
    fill_value = _scalar(fill_value)
    return _like(input, lambda b, s, d: b.full(s, fill_value, d), dtype, device, requires_grad, memory_format,
                 "full_like")


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, layout=None) -> Tensor:
    """``[start, end)`` in steps of ``step``: ``ceil((end - start) / step)`` elements, each
    ``start + i * step`` (so float steps behave as in PyTorch). int64 unless an argument is a float."""
    if end is None:
        start, end = 0, start
    if dtype is not None and dtype.is_complex:  # PyTorch has no complex arange kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.scalar_type_name(dtype)}'")
    start, end, step = (_scalar(x) for x in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(x) for x in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    integral = all(isinstance(x, int) for x in (start, end, step))
    if dtype is None:
        dtype = _dtype.int64 if integral else _dtype.get_default_dtype()
    backend, dev = _backend_and_device(device)
    xp = backend.xp
    count = max(0, -((start - end) // step) if integral else math.ceil((end - start) / step))
    check_allocation("arange", (count,), _dtype.int64 if integral else _dtype.float64, backend)
    if integral:
        array = xp.arange(count, dtype=backend.array_dtype(_dtype.int64)) * step + start
    else:
        array = xp.arange(count, dtype=backend.array_dtype(_dtype.float64)) * step + start
    return _finish(from_array(array.astype(backend.array_dtype(dtype)), backend, dev), requires_grad)


def _linear_values(backend, start, end, steps: int, compute, step=None, fused: bool = True):
    """PyTorch's linspace kernel: ``start + i*step`` for the first half, ``end - (steps-1-i)*step``
    for the second (so both ends are exact), evaluated in ``compute``; in float32 and float64 each value
    is one fused multiply-add (``fused``), as in PyTorch's compiled kernel; narrower floats round after each
    operation, and take the endpoints through float32, as c10's conversions do."""
    xp = backend.xp
    array_dtype = backend.array_dtype(compute)
    narrow = compute is not _dtype.float32 and compute is not _dtype.float64
    if narrow:
        single = backend.array_dtype(_dtype.float32)
        start, end = (xp.asarray(v, dtype=single) for v in (start, end))
    if steps == 1:
        return xp.full((1,), start, dtype=array_dtype)
    start_v, end_v = xp.asarray(start, dtype=array_dtype), xp.asarray(end, dtype=array_dtype)
    if step is None:
        step = (end_v - start_v) / (steps - 1)
    count = xp.arange(steps)
    first_half = count < steps // 2
    up, down = count.astype(array_dtype), (steps - 1 - count).astype(array_dtype)
    if narrow or not fused:
        return xp.where(first_half, start_v + step * up, end_v - step * down)
    return xp.where(first_half, _fused_multiply_add(xp, step, up, start_v), _fused_multiply_add(xp, -step, down, end_v))


_SPLIT = 134217729.0  # 2**27 + 1: Dekker's splitting constant for float64


def _fused_multiply_add(xp, a, b, c):
    """``a * b + c`` rounded once (the fma instruction), for float32 or float64 arrays: float32 through float64,
    whose products of float32 values are exact; float64 by error-free transformations (Dekker's exact product,
    Knuth's exact sum), which round correctly except in cases far rarer than linspace's inputs produce."""
    dtype = xp.result_type(a, b, c)
    if dtype.itemsize == 4:
        wide = xp.float64
        return (xp.asarray(a, dtype=wide) * xp.asarray(b, dtype=wide) + xp.asarray(c, dtype=wide)).astype(dtype)
    a, b, c = xp.asarray(a, dtype=dtype), xp.asarray(b, dtype=dtype), xp.asarray(c, dtype=dtype)
    product = a * b
    a_big = _SPLIT * a
    a_high = a_big - (a_big - a)
    a_low = a - a_high
    b_big = _SPLIT * b
    b_high = b_big - (b_big - b)
    b_low = b - b_high
    product_error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    total = product + c
    virtual = total - product
    sum_error = (product - (total - virtual)) + (c - virtual)
    return total + (sum_error + product_error)


def _check_steps(name: str, steps) -> int:
    steps = operator.index(_scalar(steps))
    if steps < 0:
        raise RuntimeError(f"{name}(): number of steps must be non-negative")
    return steps


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False, layout=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (for an integer dtype, from the
    truncated ``start`` to the truncated ``end``, as PyTorch)."""
    steps = _check_steps("linspace", steps)
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    start, end = _endpoint(_scalar(start), dtype), _endpoint(_scalar(end), dtype)
    compute = dtype if dtype.is_floating_point else _dtype.float64
    check_allocation("linspace", (steps,), compute, backend)
    array = _linear_values(backend, start, end, steps, compute).astype(backend.array_dtype(dtype))
    return _finish(from_array(array, backend, dev), requires_grad)


def _endpoint(value, dtype) -> float:
    """A range endpoint as PyTorch's kernels take it: converted to an integer dtype by truncation."""
    return float(int(value)) if not dtype.is_floating_point and dtype is not _dtype.bool else float(value)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None, requires_grad=False,
             layout=None) -> Tensor:
    """``base ** linspace(start, end, steps)``, as PyTorch's kernel computes it: the endpoints in ``dtype``
    (truncated for integers), the exponents in float64 (one fused multiply-add each), ``pow`` in float64
    (an integer dtype's base first rounded to float32)."""
    steps = _check_steps("logspace", steps)
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    check_allocation("logspace", (steps,), _dtype.float64, backend)
    xp = backend.xp
    wide = backend.array_dtype(_dtype.float64)
    start, end, base = float(_scalar(start)), float(_scalar(end)), float(base)
    if steps > 1 and dtype.is_floating_point:
        start_v, end_v = (xp.asarray(v, dtype=backend.array_dtype(dtype)) for v in (start, end))
        step = (end_v - start_v).astype(wide) / (steps - 1)  # the difference is taken in dtype
        start, end = float(start_v), float(end_v)
        exponents = _linear_values(backend, start, end, steps, _dtype.float64, step, fused=False)
    elif steps > 1:
        start, end = _endpoint(start, dtype), _endpoint(end, dtype)
        base = float(xp.asarray(base, dtype=backend.array_dtype(_dtype.float32)))
        exponents = _linear_values(backend, start, end, steps, _dtype.float64, fused=False)
    else:
        exponents = xp.full((steps,), start, dtype=wide)
    if backend.device_type == "meta":  # shapes only
        array = xp.power(base, exponents)
    else:  # the C library's pow, as PyTorch's kernel calls it (numpy's vectorized power can differ in the last bit)
        array = xp.asarray([_pow(base, e) for e in exponents.tolist()], dtype=wide)
    array = array.astype(backend.array_dtype(dtype))
    return _finish(from_array(array, backend, dev), requires_grad)


def _pow(base: float, exponent: float) -> float:
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return math.inf
    except ValueError:  # a negative base to a fractional power: C's pow gives NaN
        return math.nan


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False, layout=None) -> Tensor:
    """An ``n x m`` matrix with ones on the diagonal."""
    m = n if m is None else m
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    backend, dev = _backend_and_device(device)
    dtype = dtype or _dtype.get_default_dtype()
    check_allocation("eye", (n, m), dtype, backend)
    array = backend.xp.eye(n, m, dtype=backend.array_dtype(dtype))
    return _finish(from_array(array, backend, dev), requires_grad)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return full((), value, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def legacy_new(cls, *args, **kwargs):
    """``Tensor.__new__``, the legacy constructor: ``Tensor([1, 2])`` (default float dtype) or ``Tensor(2, 3)``."""
    device = kwargs.get("device") or "cpu"  # legacy constructors ignore set_default_device, as in PyTorch
    if args and all(isinstance(a, int) for a in args):
        source = empty(*args, device=device)
    else:
        data = args[0] if args else []
        source = tensor(data, dtype=_dtype.get_default_dtype(), device=device)
    return cls._make(source._array, source._storage, source._offset)


# Tensor.new_* use the tensor's dtype and device by default.
def _new_factory(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        device = device if device is not None else self.device
        return factory(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    method.__name__ = method.__qualname__ = "new_" + factory.__name__
    method.__doc__ = f"``{factory.__name__}`` with this tensor's dtype and device as defaults."
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    device = device if device is not None else self.device
    return full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                       pin_memory=False):
    device = device if device is not None else self.device
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    device = device if device is not None else self.device
    return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


__all__ = [
    "tensor", "as_tensor", "from_numpy", "from_dlpack", "empty", "empty_strided", "zeros", "ones", "full",
    "empty_like", "zeros_like", "ones_like", "full_like", "arange", "linspace", "logspace", "eye", "scalar_tensor",
]
