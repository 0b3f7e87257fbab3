"""F.interpolate (and the deprecated upsample wrappers): resize the spatial dims of (N, C, *spatial) inputs.

Every mode but 'area' is separable: along each spatial dim, output position ``i`` is a weighted sum of a few
input positions (1 for nearest, 2 for linear, 4 for bicubic). So the resize is, per dim, a product with the
(in, out) matrix of those weights (or a sum of ``index_select`` times a weight vector), built from
differentiable ops (gradients, and gradients of gradients, come from theirs). The source positions and
weights follow PyTorch's CPU kernels (UpSample.h), including their float32 arithmetic for float32 inputs,
so nearest picks the same pixels and linear/bicubic agree to rounding. 'area' is adaptive average pooling,
as in PyTorch.
"""

from __future__ import annotations

import math
import numbers
import struct
import warnings

from ... import _dtype
from ...creation import tensor, zeros
from ...tensor import Tensor
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

_CUBIC_A = -0.75
_MODES_FOR_DIM = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _float32(x: float) -> float:
    """``x`` rounded to the nearest float32 (PyTorch's kernels compute float32 inputs' indices in float)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _identity(x: float) -> float:
    return x


def _compute_scale(in_size: int, out_size: int, scale, align_corners: bool, rounded) -> float:
    """PyTorch's ``area_pixel_compute_scale``: the input step per output step."""
    if align_corners:
        return rounded((in_size - 1) / (out_size - 1)) if out_size > 1 else 0.0
    if scale is not None and scale > 0:
        return rounded(1.0 / scale)
    return rounded(in_size / out_size)


def _source_index(scale: float, i: int, align_corners: bool, cubic: bool, rounded) -> float:
    """PyTorch's ``area_pixel_compute_source_index``: where output ``i`` reads, in input coordinates."""
    if align_corners:
        return rounded(scale * i)
    src = rounded(rounded(scale * (i + 0.5)) - 0.5)
    return src if cubic or src >= 0 else 0.0


def _nearest_taps(in_size: int, out_size: int, scale, exact: bool) -> list:
    """[(indices, None)]: nearest-neighbour source positions (``floor(i * scale)``, exact: ``(i + 0.5)``)."""
    if not exact and out_size == in_size:
        return [(list(range(out_size)), None)]
    if not exact and out_size == 2 * in_size:
        return [([i >> 1 for i in range(out_size)], None)]
    step = _compute_scale(in_size, out_size, scale, False, _float32)
    offset = 0.5 if exact else 0.0
    return [([min(math.floor(_float32((i + offset) * step)), in_size - 1) for i in range(out_size)], None)]


def _linear_taps(in_size: int, out_size: int, scale, align_corners: bool, rounded) -> list:
    """[(i0, w0), (i1, w1)]: the two neighbours and their weights (``guard_index_and_lambda``)."""
    step = _compute_scale(in_size, out_size, scale, align_corners, rounded)
    i0, i1, w0, w1 = [], [], [], []
    for i in range(out_size):
        src = _source_index(step, i, align_corners, False, rounded)
        index = min(math.floor(src), in_size - 1)
        lam = min(max(rounded(src - index), 0.0), 1.0)
        i0.append(index)
        i1.append(index + (1 if index < in_size - 1 else 0))
        w0.append(rounded(1 - lam))
        w1.append(lam)
    return [(i0, w0), (i1, w1)]


def _cubic_weights(t: float) -> tuple:
    """Keys' cubic convolution weights (A = -0.75, as PyTorch) of the 4 taps around a fraction ``t``."""
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_taps(in_size: int, out_size: int, scale, align_corners: bool, rounded) -> list:
    """[(indices, weights)] * 4: positions ``floor(src) - 1 .. + 2`` clamped to the input (edge replicate)."""
    step = _compute_scale(in_size, out_size, scale, align_corners, rounded)
    taps = [([], []) for _ in range(4)]
    for i in range(out_size):
        src = _source_index(step, i, align_corners, True, rounded)
        index = min(math.floor(src), in_size - 1)
        lam = min(max(rounded(src - index), 0.0), 1.0)
        for j, weight in enumerate(_cubic_weights(lam)):
            taps[j][0].append(max(min(index - 1 + j, in_size - 1), 0))
            taps[j][1].append(weight)
    return taps


_DENSE_LIMIT = 1 << 22  # entries of the (out, in) resampling matrix built for a matmul


def _resample(input: Tensor, dim: int, taps: list) -> Tensor:
    """``sum_j input.index_select(dim, index_j) * weight_j`` (weights broadcast along ``dim``).

    For floating inputs with finite values this is computed as one matmul with the (out, in) matrix holding the
    weights (when that matrix is small): the same sums, several times faster forward and backward than
    gathers and their scatter-add adjoints. (With an inf or nan anywhere, 0 * inf would spread it along the
    whole row, so those inputs take the gathers.)"""
    in_size, out_size = input.shape[dim], len(taps[0][0])
    if (input.is_floating_point() and in_size * out_size <= _DENSE_LIMIT and input.numel()
            and bool(input.detach().isfinite().all())):
        # the transposed matrix M (in, out), M[index_j[i], i] += weight_j[i], built directly, and a 2-D product:
        # numpy's stacked matmul leaves BLAS for a non-contiguous operand and is then 100x slower
        index = tensor([list(i) for i, _ in taps], dtype=_dtype.int64, device=input.device)
        values = tensor([w if w is not None else [1.0] * out_size for _, w in taps], dtype=input.dtype,
                        device=input.device)
        matrix = zeros((in_size, out_size), dtype=input.dtype, device=input.device).scatter_add(0, index, values)
        moved = input.movedim(dim, -1)
        rows = moved.reshape(-1, in_size) @ matrix
        return rows.reshape(*moved.shape[:-1], out_size).movedim(-1, dim)
    shape = [1] * input.dim()
    shape[dim] = -1
    out = None
    for index, weight in taps:
        picked = input.index_select(dim, tensor(index, dtype=_dtype.int64, device=input.device))
        if weight is not None:
            picked = picked * tensor(weight, dtype=input.dtype, device=input.device).reshape(shape)
        out = picked if out is None else out + picked
    return out


def _output_size(input: Tensor, size, scale_factor, recompute_scale_factor, mode: str) -> tuple:
    """(output sizes, per-dim scale factors or Nones) as ``F.interpolate`` resolves them."""
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {spatial} and output size of {size}. Please provide input tensor in (N, C, d1, "
                    "d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(x, numbers.Integral) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], but "
                    f"got size with types {[type(x) for x in size]}"
                )
            output = [int(x) for x in size]
        else:
            output = [int(size)] * dim
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return output, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial "
                f"dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
            )
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    output = [int(n * s) for n, s in zip(spatial, scales)]
    if recompute_scale_factor or mode == "area":
        scales = [None] * dim
    return output, scales


def _check_mode(input: Tensor, mode: str, antialias: bool) -> None:
    ndim = input.dim()
    if antialias:
        if mode in ("bilinear", "bicubic", "lanczos") and ndim == 4:
            raise NotImplementedError(f"interpolate(): antialias=True ({mode}) is not implemented in minitorch")
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "lanczos" and ndim == 4:
        raise ValueError("Lanczos mode requires antialias=True")
    if ndim in (3, 4, 5) and mode in ("nearest", "nearest-exact", "area"):
        return
    wanted = _MODES_FOR_DIM.get(mode)
    if ndim in (3, 4, 5) and wanted is not None:
        if ndim - 2 == wanted:
            return
        if not (mode == "bicubic" and ndim != 4):
            raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {wanted + 2}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: nearest | linear | "
        f"bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
    )


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize (N, C, *spatial) to ``size`` or ``floor(spatial * scale_factor)``.

    ``mode``: 'nearest' (PyTorch's legacy ``floor(i * in / out)``), 'nearest-exact', 'linear' (3-D input),
    'bilinear' / 'bicubic' (4-D), 'trilinear' (5-D) or 'area'; ``align_corners`` (interpolating modes only,
    default False) maps the corner pixels' centres onto each other."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output, scales = _output_size(input, size, scale_factor, recompute_scale_factor, mode)
    _check_mode(input, mode, antialias)
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[input.dim() - 3]
        return pool(input, output)
    if mode not in ("nearest", "nearest-exact") and not input.is_floating_point():
        kernel = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d", "bicubic": "upsample_bicubic2d",
                  "trilinear": "upsample_trilinear3d"}[mode]
        raise RuntimeError(f'"{kernel}_out_frame" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    rounded = _identity if input.dtype is _dtype.float64 else _float32
    out = input
    for d, (in_size, out_size, scale) in enumerate(zip(input.shape[2:], output, scales)):
        if out_size <= 0 or in_size <= 0:
            sizes = ", ".join(map(str, input.shape[2:]))
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({sizes}) and output "
                               f"({', '.join(map(str, output))})")
        if mode in ("nearest", "nearest-exact"):
            taps = _nearest_taps(in_size, out_size, scale, mode == "nearest-exact")
        elif mode == "bicubic":
            taps = _cubic_taps(in_size, out_size, scale, align_corners, rounded)
        else:
            taps = _linear_taps(in_size, out_size, scale, align_corners, rounded)
        out = _resample(out, d + 2, taps)
    return out


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None
             ) -> Tensor:
    """Deprecated alias of ``interpolate`` (warns, as PyTorch does)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]
