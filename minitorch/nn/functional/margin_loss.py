"""Multi-class margin losses and the triplet loss with a custom distance (torch.nn.functional).

Each is a composition of differentiable ops (gather, relu, masks, sums), so gradients need no code here.
Integer targets are read on the host only to check their range (PyTorch's "target out of range").
"""

from __future__ import annotations

from collections.abc import Callable

from ... import _dtype
from ...creation import arange, tensor
from ...ops.pointwise import clamp_min
from ...tensor import Tensor
from .activation import relu
from .loss import _reduce, _reduction, pairwise_distance


def _check_long_target(target: Tensor) -> None:
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype.scalar_type_name(target.dtype)}")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Per sample ``sum_{i != y} w[y] * max(0, margin - x[y] + x[i])^p / C`` (``p`` 1 or 2) for input (N, C) or
    (C,) and class indices ``target`` (N,) or ()."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (input.dim() == 1 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    _check_long_target(target)
    unbatched = input.dim() <= 1
    x = input.reshape(1, -1) if unbatched else input
    n, c = x.shape
    if target.numel() != n or (not unbatched and target.dim() != 1):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch "
            f"size). Expected target size [{n}], but got {list(target.shape)}. Input has shape {list(input.shape)}."
        )
    y = target.reshape(n)
    if n and (int(y.min()) < 0 or int(y.max()) >= c):
        raise RuntimeError("target out of range")
    picked = x.gather(1, y.unsqueeze(1))
    hinge = relu(margin - picked + x)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight.index_select(0, y).unsqueeze(1)
    others = arange(c, device=x.device).unsqueeze(0) != y.unsqueeze(1)
    loss = (hinge * others).sum(1) / c
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Per sample ``sum_{j in targets} sum_{i not in targets} max(0, 1 - (x[j] - x[i])) / C``: ``target`` holds
    class indices, ended by the first -1 (input (N, C) or (C,), target of the same shape)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_long_target(target)
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    unbatched = input.dim() <= 1
    x = input.reshape(1, -1) if unbatched else input
    n, c = x.shape
    counts = [[0] * c for _ in range(n)]  # how often each class is listed before the first -1
    for row, labels in zip(counts, target.reshape(n, c).tolist()):
        for label in labels:
            if label < 0:
                break
            if label >= c:
                raise RuntimeError("argument #2 'target' is out of range")
            row[label] += 1
    count = tensor(counts, dtype=x.dtype, device=x.device)
    is_target = count > 0
    # pairs (j listed, i not listed): hinge on 1 - x[j] + x[i]
    hinge = relu(1 - x.unsqueeze(2) + x.unsqueeze(1))
    pairs = count.unsqueeze(2) * (~is_target).unsqueeze(1)
    loss = (hinge * pairs).sum((1, 2)) / c
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with any ``distance_function`` (default: pairwise L2);
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative {negative.dim()}D inputs"
        )
    distance = distance_function if distance_function is not None else pairwise_distance
    d_positive = distance(anchor, positive)
    d_negative = distance(anchor, negative)
    if swap:
        d_swap = distance(positive, negative)
        d_negative = d_negative.minimum(d_swap)
    return _reduce(clamp_min(margin + d_positive - d_negative, 0), reduction)


__all__ = ["multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]
