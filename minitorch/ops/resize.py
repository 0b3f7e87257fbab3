"""Resizing a tensor in place (``resize_``, ``resize_as_``) and the deprecated out-of-place ``resize``.

``resize_`` gives the tensor a new size with contiguous strides (or a memory format's) over the same
storage and storage offset, so the first elements keep their values; when the storage is too small it
grows (the new elements are uninitialized). It is no autograd op: as in PyTorch, a tensor that requires
grad refuses it.
"""

from __future__ import annotations

import math
import operator
import warnings

from ..autograd import grad_mode
from ..memory_format import checked, contiguous_format, format_strides, preserve_format
from ..tensor import Size, Tensor
from .arguments import user_stacklevel
from .views import contiguous_strides


def _sizes(op: str, sizes) -> tuple:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    for n in sizes:
        if isinstance(n, bool) or not hasattr(n, "__index__"):
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not {type(n).__name__}")
    sizes = tuple(map(operator.index, sizes))
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    return sizes


def resize_(self: Tensor, *sizes, memory_format=contiguous_format) -> Tensor:
    """Give ``self`` the size ``sizes`` in place, keeping its storage and storage offset (growing the storage
    when it is too small); returns self."""
    shape = _sizes("resize_", sizes)
    if self.requires_grad and grad_mode.state.enabled:
        raise RuntimeError("cannot resize variables that require grad")
    if memory_format is None or memory_format is preserve_format:
        memory_format = contiguous_format
    strides = format_strides(checked("resize_", memory_format), shape) or contiguous_strides(shape)
    storage = self._storage
    needed = self._offset + math.prod(shape)
    if needed > len(storage):
        grown = storage.backend.empty((needed,), storage.dtype)
        grown[: len(storage)] = storage.data
        storage.data = grown
    self._array = storage.backend.as_strided(storage.data, shape, strides, self._offset)
    storage.version += 1
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=contiguous_format) -> Tensor:
    """``resize_`` to ``the_template``'s size."""
    return resize_(self, the_template.shape, memory_format=memory_format)


def resize(self: Tensor, *sizes) -> Tensor:
    """Deprecated: ``self`` reshaped to ``sizes``, which must hold as many elements (differentiable)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=user_stacklevel())
    shape = _sizes("resize", sizes)
    numel = math.prod(shape)
    if numel != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({numel} elements in total), but the given tensor has "
            f"a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's resize can only "
            "change the shape of a given tensor, while preserving the number of elements. "
        )
    return self.contiguous().view(shape)


__all__: list = []
