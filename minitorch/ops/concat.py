"""Concatenation: ``cat`` (``concat``, ``concatenate``) and ``stack``, one Op (``Cat``) whose gradient is each
input's slice of the output's. Below the view ops, whose multi-output backward (``split``, ``unbind``) is a cat.
"""

from __future__ import annotations

from ..autograd.forward_ad import zeros_for_missing
from ..memory_format import channels_last, channels_last_3d, is_in_format
from ..tensor import Tensor, wrap_dim
from .op import Op
from .promotion import promote


def _tensor_list(op: str, tensors) -> list:
    """The tensors of a non-empty TensorList argument. An empty list is PyTorch's error: ValueError for cat
    (its Python binding checks), RuntimeError "expects a non-empty TensorList" for the others."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        if op == "cat":
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def _shapes(tensors) -> str:
    return ", ".join(str(list(t.shape)) for t in tensors)


# concatenation ----------------------------------------------------------------------------------


class Cat(Op):
    """Concatenation in the promoted dtype; each input's gradient is its slice of the output's."""

    def forward(self, *arrays, dim, keep):
        self.dim, self.keep = dim, keep
        self.sizes = [a.shape[dim] if k else 0 for a, k in zip(arrays, keep)]
        *cast, _ = promote(self, *arrays)
        pieces = [a for a, k in zip(cast, keep) if k]
        if _all_channels_last(pieces):  # PyTorch keeps the inputs' common channels-last layout (numpy does too)
            return self.xp.concatenate(pieces, axis=dim)
        shape = list(pieces[0].shape)
        shape[dim] = sum(a.shape[dim] for a in pieces)
        # otherwise PyTorch's output is row-major whatever the inputs' layout (numpy's would follow theirs, and a
        # view or as_strided of the result then reads other elements: fuzzer seeds 334357, 378060)
        return self.xp.concatenate(pieces, axis=dim, out=self.xp.empty(shape, dtype=pieces[0].dtype))

    def backward(self, grad):
        grads, start = [], 0
        for size, kept in zip(self.sizes, self.keep):
            grads.append(grad.narrow(self.dim, start, size) if kept else grad.new_zeros((0,)))
            start += size
        return tuple(grads)

    def jvp(self, inputs, outputs, tangents):  # linear in all inputs together: the tangents concatenated
        return Cat.apply(*zeros_for_missing(inputs, tangents), **self.keywords)


def _all_channels_last(arrays) -> bool:
    """Whether every array is laid out channels-last (4-D or 5-D) and not simply row-major (PyTorch's
    suggest_memory_format of each input agrees on a channels-last format)."""
    for fmt in (channels_last, channels_last_3d):
        if all(not a.flags.c_contiguous and is_in_format(a.shape, tuple(s // a.itemsize for s in a.strides), fmt)
               for a in arrays):
            return True
    return False


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing ``dim``; the result has their promoted dtype. As in PyTorch,
    1-D empty tensors are skipped whatever their neighbours' shapes."""
    tensors = _tensor_list("cat", tensors)
    keep = [not (t.dim() == 1 and t._array.shape[0] == 0) for t in tensors]
    if not any(keep):  # only legacy empty tensors: an empty result, whatever ``dim`` says (as PyTorch)
        return Cat.apply(*tensors, dim=0, keep=(True,) * len(tensors))
    kept = [t for t, k in zip(tensors, keep) if k]
    for i, t in enumerate(tensors):
        if keep[i] and t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    first = kept[0]
    dim = wrap_dim(dim, first.dim())
    for i, t in enumerate(tensors):
        if not keep[i]:
            continue
        if t.dim() != first.dim():
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.dim()} and {t.dim()} (shapes {_shapes(kept)})"
            )
        for d, (n, m) in enumerate(zip(first._array.shape, t._array.shape)):
            if d != dim and n != m:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {n} but got size {m} "
                    f"for tensor number {i} in the list. (shapes {_shapes(tensors)})"
                )
    return Cat.apply(*tensors, dim=dim, keep=tuple(keep))


concat = concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join equally shaped tensors along a new ``dim``."""
    tensors = _tensor_list("stack", tensors)
    shape = tensors[0]._array.shape
    for i, t in enumerate(tensors):
        if t._array.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                f"{list(t.shape)} at entry {i}"
            )
    dim = wrap_dim(dim, len(shape) + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)
