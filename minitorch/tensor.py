"""Tensor: a strided view of a Storage, plus what autograd knows about it.

Geometry has one source of truth: ``_array``, a backend array that *is* the strided view
(``size``, ``stride`` and ``data_ptr`` are read off it; ``_offset`` records where it starts in the
storage). Views are made by computing a new size/stride/offset in Python (ops/views.py) and asking
the backend for that window of the same 1-D buffer, so every view shares memory and the version
counter with its base, as in PyTorch.
"""

from __future__ import annotations

import math
import warnings

from . import _dtype, _grad_state, _trace_state
from ._device import as_device
from ._geometry import contiguous_strides, wrap_dim
from ._names import dim_of
from .layout import strided
from .memory_format import checked as checked_memory_format
from .memory_format import contiguous_format, is_in_format, preserve_format
from .storage import Storage, TypedStorage, UntypedStorage


class Size(tuple):
    """``tensor.shape``: a tuple that prints like ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, item):
        result = tuple.__getitem__(self, item)
        return Size(result) if isinstance(item, slice) else result


class AutogradMeta:
    """The per-tensor autograd state most tensors never need (so it is created on demand)."""

    __slots__ = (
        "grad",
        "hooks",  # leaf tensors: {id: fn}; non-leaf hooks live on grad_fn
        "post_accumulate_hooks",
        "retains_grad",
        "accumulator",  # weakref to the leaf's AccumulateGrad
        "base",  # the root tensor a view was made from
        "view_version",  # storage version when a view's grad_fn was last set (issue: views+inplace)
        "creation",  # how a view was made (ops.views.view_creation): "default", "no_grad", "inference_mode",
        # "multi_output", "custom_function"; a view of a view inherits its input's restriction
        "is_inference",
        "name",
        "tangent",  # forward-mode AD: the tangent in the open dual level (autograd/forward_ad.py)
    )

    def __init__(self):
        self.grad = self.hooks = self.post_accumulate_hooks = None
        self.retains_grad = False
        self.accumulator = self.base = self.view_version = None
        self.creation = "default"
        self.is_inference = False
        self.name = self.tangent = None


# float(t) / complex(t) of a tensor that requires grad (PyTorch's warning; int(), bool() and item() are silent)
_SCALAR_OF_GRAD_WARNING = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first."
)


class Tensor:
    """A multi-dimensional array on a device that can record the ops applied to it."""

    # _names: the dimension names, None for an unnamed tensor (minitorch/_names.py)
    __slots__ = ("_array", "_storage", "_offset", "_requires_grad", "_grad_fn", "_output_nr", "_meta", "_names",
                 "__weakref__")

    # ``Tensor(data)`` / ``Tensor(2, 3)``: the legacy constructor is creation.legacy_new (installed by
    # minitorch/_tensor_methods.py with every other method that needs a layer above this one: ``to``,
    # ``__repr__``, ``grad_fn``, ``backward``, the hooks, and the ops)
    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def _make(cls, array, storage: Storage, offset: int = 0) -> Tensor:
        """The one constructor: a ``cls`` over ``storage`` whose strided window is ``array`` (starting
        ``offset`` elements in), with no autograd history. Op results, views, aliases, ``from_numpy``,
        Parameters and the sparse and quantized subclasses are all built here."""
        t = object.__new__(cls)
        t._array = array
        t._storage = storage
        t._offset = offset
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._meta = None
        t._names = None
        return t

    def _autograd_meta(self) -> AutogradMeta:
        meta = self._meta
        if meta is None:
            meta = self._meta = AutogradMeta()
        return meta

    # geometry ----------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[self._wrap_dim(dim)]

    def stride(self, dim: int | None = None):
        array = self._array
        if array.size == 0 and not any(array.strides):  # numpy's fresh empty arrays: PyTorch's are row-major
            strides = contiguous_strides(array.shape)
        else:
            itemsize = self._storage.dtype.itemsize
            strides = tuple(s // itemsize for s in array.strides)
        return strides if dim is None else strides[self._wrap_dim(dim)]

    def storage_offset(self) -> int:
        return self._offset

    def dim(self) -> int:
        return len(self._array.shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._array.shape)

    def numel(self) -> int:
        return math.prod(self._array.shape)

    nelement = numel

    def __len__(self) -> int:
        if not self._array.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def is_contiguous(self, memory_format=contiguous_format) -> bool:
        """Whether the elements lie in memory in ``memory_format``'s order without gaps (default: row-major)."""
        if memory_format is not contiguous_format and memory_format is not preserve_format:  # PyTorch: preserve
            checked_memory_format("is_contiguous", memory_format)  # asks for row-major too
            return is_in_format(self._array.shape, self.stride(), memory_format)
        if 0 in self._array.shape:  # PyTorch: a tensor with no elements is contiguous, whatever its strides
            return True
        expected = 1
        for n, s in zip(reversed(self._array.shape), reversed(self.stride())):
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    def element_size(self) -> int:
        return self._storage.dtype.itemsize

    def _wrap_dim(self, dim: int | str) -> int:
        try:
            return wrap_dim(dim, len(self._array.shape))
        except TypeError:  # a dimension name (comparing it with an int fails)
            if isinstance(dim, str):
                return dim_of(self, dim)
            raise

    # storage -----------------------------------------------------------------------------------
    def untyped_storage(self) -> UntypedStorage:
        return UntypedStorage(self._storage)

    def storage(self) -> TypedStorage:
        return TypedStorage(self._storage)

    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self._storage.dtype.itemsize

    @property
    def _version(self) -> int:
        return self._storage.version

    def _bump_version(self) -> None:
        self._storage.version += 1

    # dtype / device ---------------------------------------------------------------------------
    @property
    def dtype(self) -> _dtype.dtype:
        return self._storage.dtype

    @property
    def device(self):
        return self._storage.device

    @property
    def layout(self):
        return strided

    __array_priority__ = 1000  # numpy defers to Tensor: np.ones(3) + t is a Tensor, as with PyTorch
    _dense = True  # sparse/quantized subclasses set False: ops dispatch them elsewhere (ops/op.py)
    _kind = "strided"
    is_sparse = False
    is_quantized = False
    is_mkldnn = False

    def is_complex(self) -> bool:
        return self._storage.dtype.is_complex

    @property
    def is_cuda(self) -> bool:
        return self._storage.device.type == "cuda"

    @property
    def is_xpu(self) -> bool:
        """False: minitorch has no Intel GPU (XPU) backend, as a PyTorch build without one."""
        return self._storage.device.type == "xpu"

    @property
    def is_meta(self) -> bool:
        return self._storage.device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        return self._storage.device.type == "cpu"

    def is_floating_point(self) -> bool:
        return self._storage.dtype.is_floating_point

    def get_device(self) -> int:
        index = self._storage.device.index
        return -1 if index is None else index

    def type(self, dtype=None, non_blocking: bool = False):
        """With no argument, the legacy type name (``'torch.FloatTensor'``); else a cast."""
        if dtype is None:
            return legacy_type_name(self)
        if isinstance(dtype, str):  # 'torch.cuda.FloatTensor' names the device too
            return self.to("cuda" if dtype.startswith("torch.cuda.") else "cpu", _dtype_from_type_name(dtype))
        if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _dtype.dtype):
            dtype = dtype.dtype  # a legacy constructor: x.type(torch.LongTensor)
        return self.to(dtype=dtype)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(dtype=other.dtype)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> Tensor:
        return self.to(as_device(device if device is not None else "cuda"))

    def float(self) -> Tensor:
        return self.to(dtype=_dtype.float32)

    def double(self) -> Tensor:
        return self.to(dtype=_dtype.float64)

    def half(self) -> Tensor:
        return self.to(dtype=_dtype.float16)

    def bfloat16(self) -> Tensor:
        return self.to(dtype=_dtype.bfloat16)

    def cfloat(self) -> Tensor:
        return self.to(dtype=_dtype.complex64)

    def cdouble(self) -> Tensor:
        return self.to(dtype=_dtype.complex128)

    def long(self) -> Tensor:
        return self.to(dtype=_dtype.int64)

    def int(self) -> Tensor:
        return self.to(dtype=_dtype.int32)

    def short(self) -> Tensor:
        return self.to(dtype=_dtype.int16)

    def char(self) -> Tensor:
        return self.to(dtype=_dtype.int8)

    def byte(self) -> Tensor:
        return self.to(dtype=_dtype.uint8)

    def bool(self) -> Tensor:
        return self.to(dtype=_dtype.bool)

    # values -----------------------------------------------------------------------------------
    def item(self):
        if _trace_state.tracer is not None:
            _trace_state.data_read(self, "item()")
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._array.reshape(()).item() if self._array.shape else self._array.item()

    def tolist(self):
        if _trace_state.tracer is not None:
            _trace_state.data_read(self, "tolist()")
        return self._storage.backend.to_numpy(self._array).tolist()

    def numpy(self, *, force: bool = False):
        """The data as a numpy array that shares memory (CPU tensors that need no grad)."""
        if _trace_state.tracer is not None:
            _trace_state.data_read(self, "numpy()")
        if self._storage.device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self._storage.device.type} device type tensor to numpy. Use "
                    "Tensor.cpu() to copy the tensor to host memory first."
                )
            return self._storage.backend.to_numpy(self._array)
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._array

    def __array__(self, dtype=None, copy=None):
        array = self.detach().numpy(force=True) if self._storage.device.type == "cpu" else self.numpy(force=True)
        return array if dtype is None else array.astype(dtype, copy=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (``torch.from_dlpack``, ``np.from_dlpack``, ...);
        refused, as in PyTorch, for tensors that require grad, conjugate views, meta, sparse and quantized ones."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if self.layout is not strided:
            raise BufferError("Can't export tensors with layout other than torch.strided")
        if self.dtype.is_quantized:
            raise BufferError("QUInt/QInt types are not supported by dlpack")
        if self.is_conj():
            raise BufferError("Can't export tensors with the conjugate bit set")
        if self._storage.device.type == "meta":
            raise BufferError("Cannot pack tensors on meta")
        kwargs = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        return self._storage.backend.to_dlpack(self._array, {k: v for k, v in kwargs.items() if v is not None})

    def __dlpack_device__(self) -> tuple:
        """(DLPack device type, index): (1, 0) on the CPU (kDLCPU), (2, i) on cuda:i (kDLCUDA)."""
        device = self._storage.device
        if device.type == "meta":
            raise ValueError("Unknown device type meta for Dlpack")
        return (1, 0) if device.type == "cpu" else (2, device.index or 0)

    def _python_scalar(self):
        """The one element for float()/int()/complex(); PyTorch raises ValueError here (item() raises
        RuntimeError)."""
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if type(value) is complex:  # float()/int() of a complex tensor: only of a real value, as in PyTorch
            if value.imag != 0:
                raise RuntimeError("value cannot be converted to type double without overflow")
            return value.real
        return value

    def __float__(self) -> float:
        if self.requires_grad:
            warnings.warn(_SCALAR_OF_GRAD_WARNING, UserWarning, stacklevel=2)
        return float(self._python_scalar())

    def __int__(self) -> int:
        return int(self._python_scalar())

    def __index__(self) -> int:
        if self._storage.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if self.numel() == 0 else 'more than one value'} is "
                f"ambiguous"
            )
        return bool(self.item())

    def __complex__(self) -> complex:
        if self.requires_grad:
            warnings.warn(_SCALAR_OF_GRAD_WARNING, UserWarning, stacklevel=2)
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    __hash__ = object.__hash__

    def __iter__(self):
        if not self._array.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reversed__(self):
        return iter(reversed(self.unbind(0)))

    def __contains__(self, element) -> bool:
        return bool((self == element).any())

    def __format__(self, spec: str) -> str:
        """A 0-dim tensor formats as its number (``f"{loss}"`` prints ``0.5``), as in PyTorch; others as repr."""
        if self.dim() == 0 and self.device.type != "meta" and self._dense and type(self) is Tensor:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        raise TypeError("minitorch tensors are not picklable; use minitorch.save (a safe format)")

    def __deepcopy__(self, memo):
        result = self.detach().clone()
        if self._requires_grad and self.grad_fn is None:
            result.requires_grad_(True)
        if self._meta is not None and self._meta.grad is not None:
            result._autograd_meta().grad = self._meta.grad.clone()
        memo[id(self)] = result
        return result

    # aliases -----------------------------------------------------------------------------------
    def _alias(self) -> Tensor:
        """Same storage, same geometry, no autograd history (an inference tensor's alias is one too)."""
        t = Tensor._make(self._array, self._storage, self._offset)
        t._names = self._names
        if self._meta is not None and self._meta.is_inference:
            t._autograd_meta().is_inference = True
        return t

    def _view(self, size, stride, offset) -> Tensor:
        """A tensor over this tensor's storage with the given geometry (no autograd; a view of an
        inference tensor is an inference tensor, wherever it is made)."""
        storage = self._storage
        t = Tensor._make(storage.backend.as_strided(storage.data, size, stride, offset), storage, offset)
        if self._meta is not None and self._meta.is_inference:
            t._autograd_meta().is_inference = True
        return t

    def detach(self) -> Tensor:
        """A tensor sharing storage (and version counter) with no history."""
        t = self._alias()
        if _trace_state.tracer is not None:
            _trace_state.detached(self, t)
        return t

    def detach_(self) -> Tensor:
        if self._meta is not None and self._meta.base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP), this likely means that you are modifying a view of a tensor that requires grad."
            )
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    @property
    def data(self) -> Tensor:
        """The values without history. Deliberately shares the version counter (see docs/autograd.md):
        writes through ``.data`` are then caught by backward instead of giving wrong gradients."""
        return self._alias()

    @data.setter
    def data(self, value: Tensor) -> None:
        self._array = value._array
        self._storage = value._storage
        self._offset = value._offset

    # autograd ----------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or view_requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and self.is_inference() and not _grad_state.state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        dtype = self._storage.dtype
        if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # (PyTorch: complex too)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        meta = self._meta
        if self.grad_fn is not None and (meta is None or not meta.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                "instead. See github.com/pytorch/pytorch/pull/30531 for more informations.",
                UserWarning,
                stacklevel=2,
            )
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if _trace_state.tracer is not None:
            _trace_state.data_read(self, "setting .grad (zero_grad?)")
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value.shape != self.shape and not value.is_sparse:
                raise RuntimeError(
                    f"assigned grad has data of a different size: {list(value.shape)} vs {list(self.shape)}"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"assigned grad has data located on a different device: {value.device} vs {self.device}"
                )
        self._autograd_meta().grad = value

    @property
    def retains_grad(self) -> bool:
        return self._meta is not None and self._meta.retains_grad and self.grad_fn is not None

    @property
    def _base(self) -> Tensor | None:
        return None if self._meta is None else self._meta.base

    def _is_view(self) -> bool:
        return self._meta is not None and self._meta.base is not None

    def is_inference(self) -> bool:
        return self._meta is not None and self._meta.is_inference

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def name(self):
        return None if self._meta is None else self._meta.name

    def _accumulate_into(self, grad: Tensor) -> Tensor:
        """A leaf's ``.grad`` plus this gradient, as backward accumulates them (no graph): in place into a
        strided ``grad`` (bumping its version); a sparse ``.grad`` plus a strided gradient is a new strided one.
        The engine's only layout-specific step: SparseTensor overrides it (sparse/ops.py, accumulate_into)."""
        if grad.is_sparse:
            return self + grad
        xp = grad._storage.backend.xp
        xp.add(grad._array, self._array, out=grad._array)
        grad._storage.version += 1
        return grad


# helpers ------------------------------------------------------------------------------------------


def view_requires_grad(t: Tensor) -> bool:
    """A view requires grad when its base does (the base may have started to require grad after the view was
    made, through an in-place write with a grad-requiring value). So does one made in no_grad or inference mode,
    as in PyTorch (DifferentiableViewMeta::requires_grad); it stays a leaf without a grad accumulator: ops that
    use it are recorded, but no gradient flows into it or its base."""
    meta = t._meta
    return meta is not None and meta.base is not None and meta.base._requires_grad


def from_array(array, backend, device, cls: type = None) -> Tensor:
    """A new tensor (of ``cls``, a Tensor subclass, if given) owning a fresh backend array (every op's result
    goes through here: the row-major case is tested first, inline)."""
    if type(array) is backend.ndarray and array.flags.c_contiguous:
        buffer = array.ravel()  # (a view here; half the cost of reshape(-1))
    else:
        buffer, array = backend.buffer_of(array)
    t = (cls or Tensor)._make(array, Storage(buffer, backend, device, backend.dtype_of(array)))
    if _grad_state.state.inference:
        t._autograd_meta().is_inference = True
    return t


_LEGACY_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
    "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
    "bool": "BoolTensor", "bfloat16": "BFloat16Tensor", "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def legacy_type_name(t: Tensor) -> str:
    """PyTorch's legacy names (``torch.FloatTensor``), kept verbatim so ported scripts compare equal."""
    prefix = "torch.cuda." if t.is_cuda else "torch."
    return prefix + _LEGACY_NAMES.get(t.dtype.name, t.dtype.name)


def _dtype_from_type_name(name: str):
    short = name.rsplit(".", 1)[-1]
    for dname, legacy in _LEGACY_NAMES.items():
        if legacy == short and dname in _dtype.DTYPES_BY_NAME:
            return _dtype.DTYPES_BY_NAME[dname]
    raise ValueError(f"invalid type: '{name}'")
