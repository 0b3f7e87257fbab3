"""Normalization: layer_norm, batch_norm, group_norm, instance_norm, rms_norm, normalize, local_response_norm.

The first four share one fused op, ``Normalize`` (``(x - mean) / sqrt(var + eps)`` over some dims);
each layer only picks the dims and applies its affine ``weight``/``bias`` with Tensor ops.
"""

from __future__ import annotations

import math

from ..._autocast_state import autocast_op
from ...autograd import grad_mode
from ...creation import arange
from ...ops.comparison import depends_on
from ...ops.op import Op, not_differentiable
from ...ops.promotion import bfloat16_in_float32
from ...tensor import Tensor
from .activation import check_floating
from .linear import linear

_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


class Normalize(Op):
    """``y = (x - mean) * rstd`` with ``rstd = 1 / sqrt(var + eps)`` (biased variance) over ``dims``.

    Gradient: ``rstd * (g - mean(g) - y * mean(g * y))``, with ``y`` computed again from ``x``: as
    PyTorch's native norms, only the input is saved, so writing into the output in place leaves backward
    valid. Without create_graph it uses the mean and rstd arrays kept from forward; with create_graph it
    recomputes them from ``x`` in Tensor ops so the second derivative is exact. ``stats``, when a list,
    receives the batch ``(mean, var)`` arrays (for running statistics) at no extra cost."""

    save_inputs = (0,)
    mean = rstd = None

    @bfloat16_in_float32
    def forward(self, x, dims, eps, stats=None):
        self.dims, self.eps = dims, eps
        self.mean = mean = self.backend.mean(x, dims, True)
        centered = x - mean
        var = self.backend.mean(centered * centered, dims, True)
        self.rstd = 1 / self.xp.sqrt(var + eps)
        if stats is not None:
            stats.extend((mean, var))
        centered *= self.rstd
        return centered

    def backward(self, grad):
        (x,) = self.saved_tensors
        dims = self.dims
        if grad_mode.is_grad_enabled():
            centered = x - x.mean(dims, keepdim=True)
            rstd = ((centered * centered).mean(dims, keepdim=True) + self.eps).rsqrt()
        else:
            centered, rstd = x - self.constant(self.mean), self.constant(self.rstd)
        y = centered * rstd
        return rstd * (grad - grad.mean(dims, keepdim=True) - y * (grad * y).mean(dims, keepdim=True))

    def release_saved(self) -> None:
        super().release_saved()
        self.mean = self.rstd = None


class NormalizeWithRunningStats(Op):
    """``(x - running_mean) * rsqrt(running_var + eps)``: batch/instance norm in evaluation. The gradient is
    ``grad * rsqrt(running_var + eps)``; as PyTorch's native_batch_norm_backward takes the input, it requires grad
    with x under create_graph, and its derivative in x is undefined ("not used in the graph")."""

    save_inputs = (0,)

    def forward(self, x, mean, var, eps):
        self.rstd = (1 / self.xp.sqrt(var + eps)).astype(x.dtype, copy=False)
        return ((x - mean) * self.rstd).astype(x.dtype, copy=False)

    def backward(self, grad):
        (x,) = self.saved_tensors
        return depends_on(grad * self.constant(self.rstd), x, undefined=True)


class NativeAffine(Op):
    """``y * weight + bias`` (either may be None) after a native norm (layer, batch, instance, group norm).
    PyTorch computes the affine inside the norm's one node, whose backward takes the weight (and layer_norm's the
    bias): under create_graph every gradient it gives requires grad with them, with an undefined derivative in
    them (differentiating the weight's gradient w.r.t. the weight says "not used in the graph")."""

    save_inputs = (0, 1, 2)

    def forward(self, y, weight, bias, reads_bias):
        self.reads_bias = reads_bias
        out = y if weight is None else y * weight
        return out if bias is None else out + bias

    def backward(self, grad):
        y, weight, bias = self.saved_tensors
        sources = (weight, bias) if self.reads_bias else (weight,)
        grads = (
            (grad if weight is None else grad * weight) if self.needs_grad(0) else None,
            grad * y if self.needs_grad(1) else None,
            grad if self.needs_grad(2) else None,
        )
        return tuple(None if g is None else depends_on(g, *sources, undefined=True) for g in grads)


def _native_affine(out: Tensor, weight: Tensor | None, bias: Tensor | None, shape=None, reads_bias=False) -> Tensor:
    if weight is None and bias is None:
        return out
    if shape is not None:
        weight = None if weight is None else weight.reshape(shape)
        bias = None if bias is None else bias.reshape(shape)
    return NativeAffine.apply(out, weight, bias, reads_bias)


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None, shape=None) -> Tensor:
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


def _channel_shape(input: Tensor) -> tuple:
    """Shape that broadcasts a per-channel (dim 1) vector over ``input``."""
    return (input.shape[1],) + (1,) * (input.dim() - 2)


def _normalized_shape(input: Tensor, normalized_shape) -> tuple:
    """``normalized_shape`` as a tuple, checked to be the input's trailing dims (layer_norm, rms_norm)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.dim() < k or tuple(input.shape[-k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    return shape


@autocast_op("float32", device_types=('cuda',))
def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims, then ``* weight + bias`` (elementwise)."""
    shape = _normalized_shape(input, normalized_shape)
    k = len(shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                f"{list(t.shape)} and normalized_shape = {list(shape)}"
            )
    check_floating("layer_norm", input)
    out = Normalize.apply(input, tuple(range(input.dim() - k, input.dim())), eps)
    return _native_affine(out, weight, bias, reads_bias=True)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing ``normalized_shape`` dims;
    ``eps=None`` uses the machine epsilon of the input's dtype."""
    shape = _normalized_shape(input, normalized_shape)
    k = len(shape)
    check_floating("rms_norm", input)
    if eps is None:
        eps = _EPS.get(input.dtype.name, 2.0**-23)
    dims = tuple(range(input.dim() - k, input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return _affine(out, weight, None)


def _update_running(stat: Tensor, batch_stat, momentum: float) -> None:
    """``stat = (1 - momentum) * stat + momentum * batch_stat``, written into ``stat``'s memory (no grad),
    as PyTorch updates its running buffers."""
    array = stat._array
    array[...] = array * (1 - momentum) + batch_stat.reshape(array.shape).astype(array.dtype, copy=False) * momentum
    stat._bump_version()


def _normalize_per_channel(name: str, input: Tensor, dims: tuple, count: int, running_mean: Tensor | None,
                           running_var: Tensor | None, weight: Tensor | None, bias: Tensor | None,
                           use_input_stats: bool, momentum: float, eps: float, no_running_stats: str,
                           too_few_values: str) -> Tensor:
    """batch_norm and instance_norm, which differ only in ``dims`` (normalized over; ``count`` elements) and in
    their messages. With the input's statistics, these are folded into the running ones (averaged over the
    batch first: instance_norm has one per sample, batch_norm a batch of one); else the running statistics
    are used. Then ``* weight + bias`` per channel."""
    check_floating(name, input)
    not_differentiable("native_batch_norm", running_mean=running_mean, running_var=running_var)
    channels = input.shape[1]
    for arg_name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                        ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{arg_name} should contain {channels} elements not {t.numel()}")
    shape = _channel_shape(input)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError(no_running_stats)
        out = NormalizeWithRunningStats.apply(input, running_mean.reshape(shape), running_var.reshape(shape), eps)
        return _native_affine(out, weight, bias, shape)
    if count <= 1:
        raise ValueError(too_few_values)
    stats = []
    out = Normalize.apply(input, dims, eps, stats)
    if stats and running_mean is not None:
        _update_running(running_mean, stats[0].mean(axis=0), momentum)
    if stats and running_var is not None:
        _update_running(running_var, stats[1].mean(axis=0) * (count / (count - 1)), momentum)
    return _native_affine(out, weight, bias, shape)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) over the batch and spatial dims, then ``* weight + bias``.

    Training uses the batch statistics and, when given, updates ``running_mean``/``running_var`` in
    place: ``(1 - momentum) * running + momentum * batch`` with the unbiased batch variance.
    Evaluation uses the running statistics."""
    if input.dim() < 2:
        raise ValueError(f"batch_norm: expected an input of shape (N, C, *), but got input of size {list(input.shape)}")
    channels = input.shape[1]
    return _normalize_per_channel(
        "batch_norm", input, (0,) + tuple(range(2, input.dim())), input.numel() // channels if channels else 0,
        running_mean, running_var, weight, bias, training, momentum, eps,
        no_running_stats="batch_norm: running_mean and running_var must be defined in evaluation mode",
        too_few_values=f"Expected more than 1 value per channel when training, got input size {input.shape}",
    )


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) over its spatial dims, then ``* weight + bias``; running
    statistics, when given, are updated with the batch average of the per-instance statistics."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input of shape (N, C, *), got input of size {list(input.shape)}")
    return _normalize_per_channel(
        "instance_norm", input, tuple(range(2, input.dim())), math.prod(input.shape[2:]),
        running_mean, running_var, weight, bias, use_input_stats, momentum, eps,
        no_running_stats="Expected running_mean and running_var to be defined when use_input_stats is false",
        too_few_values=f"Expected more than 1 spatial element when training, got input size {input.shape}",
    )


@autocast_op("float32", device_types=('cuda',))
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Split the channels into ``num_groups`` groups, normalize each (sample, group) over its channels
    and spatial dims, then ``* weight + bias`` per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    batch, channels = input.shape[:2]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    check_floating("group_norm", input)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, but got {name} "
                f"of shape {list(t.shape)} and input of shape {list(input.shape)}"
            )
    group_size = channels // num_groups * math.prod(input.shape[2:])
    grouped = input.reshape(batch, num_groups, group_size)
    out = Normalize.apply(grouped, (2,), eps).reshape(input.shape)
    return _native_affine(out, weight, bias, _channel_shape(input))


def _vector_norm(input: Tensor, p: float, dim, keepdim: bool) -> Tensor:
    """The p-norm along ``dim``; at a zero vector its gradient is 0 (as PyTorch's), not NaN."""
    if p == float("inf"):
        return input.abs().amax(dim, keepdim=keepdim)
    if p == float("-inf"):
        return input.abs().amin(dim, keepdim=keepdim)
    if p == 0:
        return (input != 0).sum(dim, keepdim=keepdim).to(input.dtype)
    if p == 1:
        return input.abs().sum(dim, keepdim=keepdim)
    total = (input * input if p == 2 else input.abs().pow(p)).sum(dim, keepdim=keepdim)
    zero = total == 0
    safe = total.masked_fill(zero, 1.0)
    return (safe.sqrt() if p == 2 else safe.pow(1.0 / p)).masked_fill(zero, 0.0)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``, composed as PyTorch's (``input.norm(...).clamp_min(eps)``),
    so its gradients are those of norm and clamp_min (the second derivative at a zero vector is nan)."""
    check_floating("normalize", input)
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``x / (k + alpha / size * sum(x^2 over size neighbouring channels)) ** beta`` (AlexNet's LRN).

    Channel c sums channels ``c - size // 2 .. c + (size - 1) // 2``, as PyTorch's zero-padded
    average pool does; the window sum is one ``linear`` with a constant banded 0/1 matrix."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    j = arange(channels, device=input.device)
    c = j.unsqueeze(1)
    band = ((j >= c - size // 2) & (j <= c + (size - 1) // 2)).to(input.dtype)
    window = linear((input * input).movedim(1, -1), band).movedim(-1, 1)
    return input / (window * (alpha / size) + k) ** beta


__all__ = [
    "layer_norm", "rms_norm", "batch_norm", "instance_norm", "group_norm", "normalize", "local_response_norm",
]
