"""max_unpool1d/2d/3d: the partial inverse of max pooling. Each pooled value is written back at the position
its window's maximum came from (``return_indices=True`` of max_pool gives those flat per-plane indices),
zeros elsewhere: a ``scatter`` into a zero plane, so the gradient is the gather at the same indices."""

from __future__ import annotations

import math

from ... import _dtype
from ...creation import zeros
from ...tensor import Tensor


def _tuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _unpool_output_size(input: Tensor, kernel_size, stride, padding, output_size) -> list:
    """PyTorch's ``_unpool_output_size``: ``(in - 1) * stride + kernel - 2 * padding`` unless ``output_size``
    (with or without the batch and channel dims) picks a size within one stride of it."""
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {low} and {high})')
    return output_size


def _max_unpool(n: int, input: Tensor, indices: Tensor, kernel_size, stride, padding, output_size) -> Tensor:
    kernel_size = _tuple(kernel_size, n)
    stride = kernel_size if stride is None else _tuple(stride, n)
    padding = _tuple(padding, n)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    if indices.dtype is not _dtype.int64:
        name = _dtype.scalar_type_name(indices.dtype)
        raise RuntimeError(f"elements in indices should be type int64 but got: {name}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    lead = tuple(input.shape[:-n])
    plane = math.prod(size)
    flat_indices = indices.reshape(*lead, -1)
    invalid = (flat_indices < 0) | (flat_indices >= plane)
    if bool(invalid.any()):
        bad = int(flat_indices[invalid].reshape(-1)[0])  # the first (PyTorch names whichever its threads meet)
        volume = "x".join(map(str, size + [1] if n == 1 else size))  # 1-d unpooling is PyTorch's 2-d one
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size {volume})")
    out = zeros(*lead, plane, dtype=input.dtype, device=input.device)
    out = out.scatter(len(lead), flat_indices, input.reshape(*lead, -1))
    return out.reshape(*lead, *size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Undo ``max_pool1d``: (N, C, L_in) or (C, L_in) values back at ``indices``, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Undo ``max_pool2d``: (N, C, H_in, W_in) or (C, H_in, W_in) values back at ``indices``."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """Undo ``max_pool3d``: (N, C, D, H, W) or (C, D, H, W) values back at ``indices``."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
