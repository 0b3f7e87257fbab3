"""Geometry: pure functions on sizes and strides (tuples of ints), below Tensor.

How a row-major tensor is laid out, which ``-1`` a reshape means, whether a view can express a new
shape, and where a negative dim points: the arithmetic of Cornell minitorch's ``tensor_data``, with no
tensor, array or backend in sight, so each can be tested alone.
"""

from __future__ import annotations

import math


def contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def non_overlapping_and_dense(shape, strides) -> bool:
    """Whether the elements fill a block of memory exactly once in some order of the dims (PyTorch's
    ``is_non_overlapping_and_dense``): the strides, sorted, are the running products of the sizes."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    expected = 1
    for d in sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d])):  # size-1 and empty dims last
        if shape[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def infer_size(shape, numel: int) -> tuple:
    """Resolve one ``-1`` in a requested shape."""
    shape = tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(n for n in shape if n != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape, old_stride, new_shape):
    """Strides for viewing ``old`` as ``new_shape`` without a copy, or None (PyTorch's computeStride)."""
    if math.prod(old_shape) == 0 or not old_shape or not new_shape:
        return contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def wrap_dim(dim: int, ndim: int) -> int:
    """A possibly negative dim as an index in ``range(ndim)`` (0-d tensors accept -1 and 0)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})")
    return dim + bound if dim < 0 else dim


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of ``shapes``, or PyTorch's RuntimeError naming the first mismatch from the right."""
    result: tuple = ()
    for shape in shapes:
        shape = tuple(shape)
        ndim = max(len(result), len(shape))
        merged = []
        for i in range(ndim):
            offset = ndim - 1 - i
            a = result[len(result) - 1 - offset] if offset < len(result) else 1
            b = shape[len(shape) - 1 - offset] if offset < len(shape) else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {i}"
                )
            merged.append(b if a == 1 else a)
        result = tuple(merged)
    return result


def broadcast_dims(size: tuple, shape: tuple) -> tuple:
    """The dims of ``shape`` that broadcasting ``size`` up to it added or stretched (summed by ``sum_to_size``)."""
    lead = len(shape) - len(size)
    return tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size) if n == 1 and shape[lead + i] != 1)
