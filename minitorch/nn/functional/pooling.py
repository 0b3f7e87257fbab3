"""Pooling: max, average, adaptive and power-average, over 1, 2 or 3 spatial dims.

All pools read the (padded) input through the strided window view of conv.py, so there is no loop
over pixels. Max pooling copies the windows into columns ``(N, C, *out, K)`` and takes the first
maximum of each (PyTorch's tie rule); its gradient is scattered back to those positions
(``MaxPoolBackward``), whose own gradient gathers from them. Average pooling is a window sum times
a per-position scale (``WindowSum``), whose adjoint adds the scaled gradient back kernel position by
kernel position (``WindowSumTranspose``). Adaptive average pooling averages each dim with a small
matrix (``AlongDim``), since a box average is a product of 1-D averages.
"""

from __future__ import annotations

import math

from ..._dtype import scalar_type_name
from ...ops.comparison import depends_on
from ...ops.op import Op, linear_jvp
from ...ops.promotion import array_kind
from ...tensor import Tensor
from .activation import relu
from .conv import WindowGeometry, col2im, padded, windows

# max pooling ------------------------------------------------------------------------------------


class PoolWindows:
    """A pool's windows: per spatial dim, the input coordinate of each (output, kernel) position."""

    def __init__(self, geometry: WindowGeometry):
        self.geometry = geometry
        self.overlapping = geometry.overlapping

    def coordinates(self, xp):
        g = self.geometry
        return [
            xp.arange(o)[:, None] * s - p + xp.arange(k)[None, :] * d
            for o, k, s, p, d in zip(g.out_size, g.kernel, g.stride, g.padding, g.dilation)
        ]

    def columns(self, op: Op, x):
        """The windows of ``x`` as ``(N, C, *out, K)``, padding filled with the dtype's lowest value."""
        xp = op.xp
        fill = -math.inf if array_kind(x.dtype) == "f" else xp.iinfo(x.dtype).min
        view = windows(op, padded(op, x, self.geometry, fill), self.geometry)
        return view.reshape(x.shape[:2] + tuple(self.geometry.out_size) + (-1,))


class AdaptiveWindows(PoolWindows):
    """Adaptive pooling's windows ``[floor(i * n / out), ceil((i + 1) * n / out))``; a shorter window
    repeats its last element up to the longest one's length (harmless for a max)."""

    def __init__(self, in_size: tuple, out_size: tuple):
        self.in_size, self.out_size = in_size, out_size
        self.overlapping = True
        self.bounds = [adaptive_bounds(n, o) for n, o in zip(in_size, out_size)]

    def coordinates(self, xp):
        result = []
        for starts, ends in self.bounds:
            length = max(e - s for s, e in zip(starts, ends))
            rows = [[min(s + k, e - 1) for k in range(length)] for s, e in zip(starts, ends)]
            result.append(xp.asarray(rows, dtype=xp.int64))
        return result

    def columns(self, op: Op, x):
        coords = self.coordinates(op.xp)
        d = len(coords)
        index = []
        for i, c in enumerate(coords):
            shape = [1] * (2 * d)
            shape[2 * i], shape[2 * i + 1] = c.shape
            index.append(c.reshape(shape))
        picked = x[(slice(None), slice(None), *index)]  # (N, C, o0, k0, o1, k1, ...)
        order = (0, 1) + tuple(range(2, 2 + 2 * d, 2)) + tuple(range(3, 3 + 2 * d, 2))
        return picked.transpose(order).reshape(x.shape[:2] + tuple(self.out_size) + (-1,))


def adaptive_bounds(n: int, out: int) -> tuple:
    """PyTorch's adaptive windows along one dim: starts ``floor(i*n/out)``, ends ``ceil((i+1)*n/out)``."""
    starts = [i * n // out for i in range(out)]
    ends = [-(-(i + 1) * n // out) for i in range(out)]
    return starts, ends


def flat_positions(xp, coords: list, in_size: tuple):
    """Flat positions in the input plane of every (*out, K) window element, from per-dim coordinates,
    and whether each lies inside the input (not in the padding)."""
    d = len(coords)
    positions, inside, step = 0, True, 1
    for i in reversed(range(d)):
        shape = [1] * (2 * d)
        shape[i], shape[d + i] = coords[i].shape
        c = coords[i].reshape(shape)
        positions = positions + c * step
        inside = xp.logical_and(inside, xp.logical_and(xp.greater_equal(c, 0), xp.less(c, in_size[i])))
        step *= in_size[i]
    out = tuple(c.shape[0] for c in coords)
    full = out + tuple(c.shape[1] for c in coords)
    return xp.broadcast_to(positions, full).reshape(out + (-1,)), xp.broadcast_to(inside, full).reshape(out + (-1,))


class MaxPool(Op):
    """The maximum of each window and, as a second (integer) output, its flat position in the input plane.
    A window whose real elements are all -inf reports its first real element, as PyTorch does. The input is
    saved, as PyTorch's max_pool*_with_indices_backward takes it: under create_graph the gradient depends on it."""

    save_inputs = (0,)
    _NODE_NAMES = {(4, False): "MaxPool2DWithIndicesBackward0", (5, False): "MaxPool3DWithIndicesBackward0",
                   (4, True): "AdaptiveMaxPool2DBackward0", (5, True): "AdaptiveMaxPool3DBackward0"}

    def name(self) -> str:  # PyTorch's node for batched 2-D and 3-D pooling (its 1-D pooling is a composite)
        key = (len(getattr(self, "input_shape", ())), getattr(self, "adaptive", False))
        return self._NODE_NAMES.get(key, "MaxPoolBackward0")

    def forward(self, x, plan):
        self.adaptive = isinstance(plan, AdaptiveWindows)
        xp = self.xp
        cols = plan.columns(self, x)
        positions, inside = flat_positions(xp, plan.coordinates(xp), x.shape[2:])
        first = xp.argmax(cols, axis=-1)[..., None]
        first_inside = xp.argmax(inside, axis=-1)[..., None]
        first = xp.where(xp.take_along_axis(xp.broadcast_to(inside, cols.shape), first, axis=-1), first, first_inside)
        values = xp.take_along_axis(cols, first, axis=-1)[..., 0]
        indices = xp.take_along_axis(xp.broadcast_to(positions, cols.shape), first, axis=-1)[..., 0]
        self.input_shape, self.overlapping = x.shape, plan.overlapping
        return values, indices

    def backward(self, grad, grad_indices=None):
        x, indices = self.saved_tensors  # indices: the second output (saved by Op._record)
        grad_x = MaxPoolBackward.apply(grad, indices, self.input_shape, self.overlapping)
        return depends_on(grad_x, x)


class MaxPoolBackward(Op):
    """Zeros of the input's shape with ``grad`` added at the argmax ``indices`` of each plane."""

    save_inputs = (1,)

    def forward(self, grad, indices, input_shape, overlapping):
        xp = self.xp
        self.grad_shape = grad.shape
        planes, size = math.prod(input_shape[:2]), math.prod(input_shape[2:])
        out = xp.zeros((planes, size), dtype=grad.dtype)
        rows = xp.arange(planes)[:, None]
        index, values = indices.reshape(planes, -1), grad.reshape(planes, -1)
        if overlapping:
            self.backend.index_add(out, (rows, index), values)
        else:
            out[rows, index] = values
        return out.reshape(input_shape)

    def backward(self, grad):
        (indices,) = self.saved_tensors
        planes = indices.shape[0] * indices.shape[1]
        picked = grad.reshape(planes, -1).gather(1, indices.reshape(planes, -1))
        return picked.reshape(self.grad_shape), None


# sums over windows ------------------------------------------------------------------------------


class WindowSum(Op):
    """``scale * sum of each window`` (zero padding); ``scale`` is None, a number or an (*out) array.
    Its gradient depends on x (derivative 0), as PyTorch's avg_pool backward, which takes the input."""

    save_inputs = (0,)

    jvp = linear_jvp  # forward mode: linear in its first input, so the op itself on the tangent (ops/op.py)

    def forward(self, x, geometry, scale):
        self.geometry, self.scale = geometry, scale
        d = len(geometry.kernel)
        view = windows(self, padded(self, x, geometry), geometry)
        total = view.sum(axis=tuple(range(2 + d, 2 + 2 * d)))
        return total if scale is None else total * _as_dtype(scale, x.dtype)

    def backward(self, grad):
        (x,) = self.saved_tensors
        return depends_on(WindowSumTranspose.apply(grad, self.geometry, self.scale), x)


class WindowSumTranspose(Op):
    """The adjoint of ``WindowSum``: each scaled output gradient added to every element of its window."""

    def forward(self, grad, geometry, scale):
        self.geometry, self.scale = geometry, scale
        if scale is not None:
            grad = grad * _as_dtype(scale, grad.dtype)
        d = len(geometry.kernel)
        lead = grad.shape[:2]
        cols = self.xp.broadcast_to(grad.reshape(lead + (1,) * d + grad.shape[2:]),
                                    lead + tuple(geometry.kernel) + grad.shape[2:])
        return col2im(self, cols, geometry)

    def backward(self, grad):
        return WindowSum.apply(grad, self.geometry, self.scale)


def _as_dtype(scale, dtype):
    return scale.astype(dtype, copy=False) if hasattr(scale, "astype") else scale


class AlongDim(Op):
    """``x`` multiplied along ``dim`` by a constant ``(out, in)`` matrix (adaptive average pooling). Its gradient
    depends on x (derivative 0), as PyTorch's adaptive_avg_pool backward, which takes the input."""

    save_inputs = (0,)

    def forward(self, x, dim, matrix):
        self.dim, self.matrix = dim, matrix
        xp = self.xp
        product = xp.tensordot(x, matrix.astype(x.dtype, copy=False), axes=([dim], [1]))
        return xp.ascontiguousarray(xp.moveaxis(product, -1, dim))

    def backward(self, grad):
        (x,) = self.saved_tensors
        return depends_on(AlongDim.apply(grad, self.dim, self.matrix.T), x)


# argument handling ------------------------------------------------------------------------------

_KERNEL_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}


def _tuple(name: str, value, d: int, arg: str) -> tuple:
    if isinstance(value, int):
        return (value,) * d
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * d
    if len(value) != d:
        raise RuntimeError(f"{name}: {arg} must either be a single int, or a tuple of {d} ints")
    return value


def _batched(name: str, input: Tensor, d: int) -> bool:
    """Whether ``input`` lacks the batch dim; raises unless it is (C, *spatial) or (N, C, *spatial)."""
    if input.dim() not in (d + 1, d + 2) or any(n == 0 for n in input.shape[-(d + 1):]):
        raise RuntimeError(
            f"{name}: Expected {d + 1}D or {d + 2}D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got: {list(input.shape)}"
        )
    return input.dim() == d + 1


def _labelled(prefix: str, values: tuple) -> str:
    return " ".join(f"{prefix}{n}: {v}" for n, v in zip(_KERNEL_NAMES[len(values)], values))


def _pool_geometry(name, input: Tensor, d, kernel_size, stride, padding, dilation, ceil_mode) -> WindowGeometry:
    kernel = _tuple(name, kernel_size, d, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _tuple(
        name, stride, d, "stride")
    padding = _tuple(name, padding, d, "padding")
    dilation = _tuple(name, dilation, d, "dilation")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{name}: kernel size should be greater than zero, but got {_labelled('k', kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{name}: stride should be greater than zero, but got {_labelled('d', stride)}")
    if any(di <= 0 for di in dilation):
        raise RuntimeError(
            f"{name}: dilation should be greater than zero, but got {_labelled('dilation', dilation)}"
        )
    if any(p < 0 or p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError(
            f"{name}: pad should be smaller than or equal to half of kernel size, but got "
            f"{_labelled('pad', padding)}, {_labelled('k', kernel)}"
        )
    spatial = tuple(input.shape[-d:])
    out = []
    for n, k, s, p, di in zip(spatial, kernel, stride, padding, dilation):
        span = n + 2 * p - di * (k - 1) - 1
        o = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        out.append(o)
    if any(o < 1 for o in out):
        channels = input.shape[-d - 1]
        raise RuntimeError(
            f"{name}: Given input size: ({'x'.join(map(str, (channels,) + spatial))}). Calculated output size: "
            f"({'x'.join(map(str, [channels] + out))}). Output size is too small"
        )
    return WindowGeometry(spatial, tuple(out), kernel, stride, padding, dilation)


def _max_pool(name, d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    unbatched = _batched(name, input, d)
    if input.dtype.name == "bool":
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    geometry = _pool_geometry(name, input, d, kernel_size, stride, padding, dilation, ceil_mode)
    values, indices = MaxPool.apply(input.unsqueeze(0) if unbatched else input, PoolWindows(geometry))
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def _avg_pool(name, d, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    unbatched = _batched(name, input, d)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(input.dtype)}\'')
    geometry = _pool_geometry(name, input, d, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError(f"{name}: divisor must be not zero")
        scale = 1.0 / divisor_override
    else:
        xp = input._storage.backend.xp
        scale = 1.0
        for i, (n, o, k, s, p) in enumerate(
            zip(geometry.in_size, geometry.out_size, geometry.kernel, geometry.stride, geometry.padding)
        ):
            starts = [j * s - p for j in range(o)]
            if count_include_pad:
                counts = [min(a + k, n + p) - a for a in starts]
            else:
                counts = [min(a + k, n) - max(a, 0) for a in starts]
            shape = [1] * d
            shape[i] = o
            scale = scale * (1.0 / xp.asarray(counts, dtype=xp.float64)).reshape(shape)
    result = WindowSum.apply(input.unsqueeze(0) if unbatched else input, geometry, scale)
    return result.squeeze(0) if unbatched else result


# public API -------------------------------------------------------------------------------------


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over sliding windows of (N, C, L); padding counts as -inf; optionally the argmax positions."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over sliding windows of (N, C, H, W); indices are flat positions in each H*W plane."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over sliding windows of (N, C, D, H, W)."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Mean over sliding windows of (N, C, L)."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over sliding windows of (N, C, H, W); the divisor counts padding unless told otherwise."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over sliding windows of (N, C, D, H, W)."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_output(name: str, input: Tensor, d: int, output_size) -> tuple:
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * d
    output_size = tuple(output_size)
    if len(output_size) != d:
        raise RuntimeError(f"{name}: output_size must be {d}, but got {len(output_size)}")
    spatial = tuple(input.shape[-d:])
    out = tuple(n if o is None else int(o) for n, o in zip(spatial, output_size))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received {out}")
    return out


def _adaptive_avg_pool(name: str, d: int, input: Tensor, output_size) -> Tensor:
    if input.dim() not in (d + 1, d + 2) or any(n == 0 for n in input.shape[-d:]):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(input.dtype)}\'')
    out = _adaptive_output(name, input, d, output_size)
    xp = input._storage.backend.xp
    result = input
    for i, (n, o) in enumerate(zip(input.shape[-d:], out)):
        if n == o:
            continue
        matrix = [[0.0] * n for _ in range(o)]
        for row, (start, end) in enumerate(zip(*adaptive_bounds(n, o))):
            for j in range(start, end):
                matrix[row][j] = 1.0 / (end - start)
        result = AlongDim.apply(result, input.dim() - d + i, xp.asarray(matrix, dtype=xp.float64).reshape(o, n))
    return result


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Mean over L adaptive windows: output size fixed, windows [floor(i*L/out), ceil((i+1)*L/out))."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows of (N, C, H, W); an output_size entry of None keeps that input size."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Mean over adaptive windows of (N, C, D, H, W)."""
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max_pool(name: str, d: int, input: Tensor, output_size, return_indices: bool):
    if input.dim() not in (d + 1, d + 2) or any(n == 0 for n in input.shape[-d:]):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got {list(input.shape)}")
    out = _adaptive_output(name, input, d, output_size)
    if any(o == 0 for o in out):
        raise RuntimeError(f"{name}(): Expected a non-empty output_size, but got {out}")
    unbatched = input.dim() == d + 1
    plan = AdaptiveWindows(tuple(input.shape[-d:]), out)
    values, indices = MaxPool.apply(input.unsqueeze(0) if unbatched else input, plan)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive windows of (N, C, L)."""
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive windows of (N, C, H, W)."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def _lp_pool(name: str, d: int, input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool) -> Tensor:
    """``(sum of x**p over each window) ** (1/p)``, as PyTorch computes it: through avg_pool (times the window
    size, the negative averages of odd powers kept by ``sign * relu(abs)``), and max_pool of ``|x|`` for
    p = +-inf."""
    k = _tuple(name, kernel_size, d, "kernel_size")
    max_pool, avg_pool = (max_pool1d, max_pool2d, max_pool3d)[d - 1], (avg_pool1d, avg_pool2d, avg_pool3d)[d - 1]
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, L): ``(sum of x**p over each window) ** (1/p)``."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, H, W): ``(sum of x**p over each window) ** (1/p)``."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, D, H, W): ``(sum of x**p over each window) ** (1/p)``."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive windows of (N, C, D, H, W)."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
]
