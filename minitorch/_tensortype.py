"""The legacy typed constructors: ``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``, ...

Each is a class whose metaclass, ``tensortype``, makes calling it build a plain ``Tensor`` of its dtype on the
CPU and makes ``isinstance(t, torch.FloatTensor)`` ask whether ``t`` is a strided float32 CPU tensor, as in
PyTorch (where these classes are not subclasses of ``Tensor`` either).
"""

from __future__ import annotations

import operator

from . import _dtype
from ._device import as_device
from .creation import empty, tensor
from .layout import strided
from .tensor import Size, Tensor, legacy_type_name


class tensortype(type):
    """The metaclass of ``torch.FloatTensor`` and friends (``type(torch.FloatTensor)``, as in PyTorch)."""

    dtype: _dtype.dtype
    is_cuda = False
    is_sparse = False

    def __call__(cls, *args, device=None) -> Tensor:
        # PyTorch's legacy constructors ignore the default device
        return legacy_new(cls.__name__, cls.dtype, args, device if device is not None else "cpu")

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor) and instance.layout is strided and \
            legacy_type_name(instance) == f"torch.{cls.__name__}"

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def legacy_new(name: str, dtype: _dtype.dtype, args: tuple, device) -> Tensor:
    """PyTorch's legacy construction: ``()`` (no elements), ``(*sizes)`` or ``(torch.Size)`` (uninitialized),
    ``(data)`` (a copy), ``(tensor)`` (the tensor itself, which must already have this dtype and device)."""
    if not args:
        return empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dtype or first.device != as_device(device):
            raise TypeError(f"{name}(): expected a tensor of dtype {dtype} on {device} (got {first.dtype} on "
                            f"{first.device})")
        return first
    if len(args) == 1 and not isinstance(first, (int, Size)):
        if isinstance(first, str):
            raise TypeError("new(): invalid data type 'str'")
        return tensor(first, dtype=dtype, device=device)
    sizes = tuple(first) if len(args) == 1 and isinstance(first, Size) else args
    for position, n in enumerate(sizes):
        try:
            operator.index(n)
        except TypeError:
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {position + 1} with error "
                f'"type must be tuple of ints,but got {type(n).__name__}"'
            ) from None
    return empty(*sizes, dtype=dtype, device=device)


def new(self: Tensor, *args, device=None) -> Tensor:
    """``x.new(...)``: the legacy constructor with ``x``'s dtype and (by default) device."""
    return legacy_new("new", self.dtype, args, device if device is not None else self.device)



def _make(name: str, dtype: _dtype.dtype) -> tensortype:
    cls = tensortype(name, (), {"__module__": "minitorch", "__doc__": f"The legacy constructor of {dtype} tensors."})
    cls.dtype = dtype
    return cls


FloatTensor = _make("FloatTensor", _dtype.float32)
DoubleTensor = _make("DoubleTensor", _dtype.float64)
HalfTensor = _make("HalfTensor", _dtype.float16)
LongTensor = _make("LongTensor", _dtype.int64)
IntTensor = _make("IntTensor", _dtype.int32)
ShortTensor = _make("ShortTensor", _dtype.int16)
CharTensor = _make("CharTensor", _dtype.int8)
ByteTensor = _make("ByteTensor", _dtype.uint8)
BoolTensor = _make("BoolTensor", _dtype.bool)

__all__ = ["tensortype", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]

if "bfloat16" in _dtype.DTYPES_BY_NAME:  # the dtype exists where ml_dtypes gives numpy one
    BFloat16Tensor = _make("BFloat16Tensor", _dtype.DTYPES_BY_NAME["bfloat16"])
    __all__.append("BFloat16Tensor")
