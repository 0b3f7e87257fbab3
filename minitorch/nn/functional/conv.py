"""Convolutions (N-d, grouped, strided, dilated, padded) and unfold/fold, on strided window views.

A convolution is computed without any Python loop over pixels: the (zero-padded) input is seen
through one ``as_strided`` view of shape ``(N, C, *out, *kernel)`` (no copy), that view is copied
once into columns ("im2col"), and one batched GEMM per group gives the output. Three linear ops close
under differentiation, so gradients of any order are again these ops:

- ``Conv(x, w)``: ``y = conv(x, w)``;
- ``ConvTranspose(gy, w)``: the adjoint of ``conv`` in ``x`` (``<conv(x, w), gy> = <x, T(gy, w)>``),
  i.e. the input gradient and ``conv_transpose``; it GEMMs into columns, then "col2im" adds each
  kernel position's strided slice back (a loop over the ``prod(kernel)`` positions only);
- ``ConvWeight(x, gy)``: the adjoint of ``conv`` in ``w``, the weight gradient (one GEMM).

The window machinery (``WindowGeometry``, ``padded``, ``windows``, ``im2col``, ``col2im``) is shared
with pooling.py.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ..._autocast_state import autocast_op
from ..._dtype import scalar_type_name
from ...ops.comparison import depends_on
from ...ops.op import Op, add_tangents, multilinear_jvp
from ...tensor import Tensor, legacy_type_name

# window geometry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowGeometry:
    """Where the sliding windows of a convolution or pooling lie along each spatial dim.

    ``padding`` is what is added *before* the input; the padding after it is implied by
    ``out_size`` (the windows span ``extent`` elements, which may also crop the input's tail)."""

    in_size: tuple
    out_size: tuple
    kernel: tuple
    stride: tuple
    padding: tuple
    dilation: tuple
    groups: int = 1

    @property
    def extent(self) -> tuple:
        """Elements spanned by all windows along each dim (the padded input's size)."""
        return tuple(
            (o - 1) * s + d * (k - 1) + 1
            for o, k, s, d in zip(self.out_size, self.kernel, self.stride, self.dilation)
        )

    @property
    def overlapping(self) -> bool:
        """Whether two windows can share an input element."""
        return any(s < d * (k - 1) + 1 for k, s, d in zip(self.kernel, self.stride, self.dilation))


def padded(op: Op, x, geometry: WindowGeometry, fill=0):
    """``x`` (N, C, *in) placed after ``geometry.padding`` fill values in a C-contiguous array of
    spatial size ``geometry.extent``; ``x`` itself when no padding or copy is needed."""
    xp = op.xp
    spatial, extent, lo = x.shape[2:], geometry.extent, geometry.padding
    if not any(lo) and all(n >= e for n, e in zip(spatial, extent)) and x.flags.c_contiguous:
        return x
    shape = x.shape[:2] + extent
    out = xp.zeros(shape, dtype=x.dtype) if fill == 0 else xp.full(shape, fill, dtype=x.dtype)
    kept = [min(n, e - p) for n, e, p in zip(spatial, extent, lo)]
    source = tuple(slice(0, k) for k in kept)
    target = tuple(slice(p, p + k) for p, k in zip(lo, kept))
    out[(Ellipsis, *target)] = x[(Ellipsis, *source)]
    return out


def windows(op: Op, x, geometry: WindowGeometry):
    """A strided view ``(N, C, *out, *kernel)`` of the sliding windows of a ``padded`` array."""
    size, acc, strides = x.shape, 1, []
    for n in reversed(size):
        strides.append(acc)
        acc *= max(n, 1)
    strides.reverse()
    spatial = strides[2:]
    view_stride = (
        tuple(strides[:2])
        + tuple(st * s for st, s in zip(spatial, geometry.stride))
        + tuple(st * d for st, d in zip(spatial, geometry.dilation))
    )
    view_size = size[:2] + tuple(geometry.out_size) + tuple(geometry.kernel)
    return op.backend.as_strided(x.reshape(-1), view_size, view_stride, 0)


def im2col(op: Op, x, geometry: WindowGeometry):
    """The windows of ``x`` copied into columns ``(N, groups, C/groups * prod(kernel), prod(out))``."""
    d = len(geometry.kernel)
    view = windows(op, padded(op, x, geometry), geometry)
    order = (0, 1) + tuple(range(2 + d, 2 + 2 * d)) + tuple(range(2, 2 + d))
    n, c = x.shape[:2]
    g = geometry.groups
    return view.transpose(order).reshape(n, g, c // g * math.prod(geometry.kernel), math.prod(geometry.out_size))


def col2im(op: Op, cols, geometry: WindowGeometry):
    """The adjoint of ``im2col``: columns ``(N, C, *kernel, *out)`` added back into ``(N, C, *in)``,
    one strided-slice addition per kernel position."""
    n, c = cols.shape[:2]
    lo, size = geometry.padding, geometry.in_size
    full = tuple(max(e, p + s) for e, p, s in zip(geometry.extent, lo, size))
    out = op.xp.zeros((n, c) + full, dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for position in itertools.product(*(range(k) for k in geometry.kernel)):
        region = tuple(
            slice(i * d, i * d + s * (o - 1) + 1, s)
            for i, d, s, o in zip(position, geometry.dilation, geometry.stride, geometry.out_size)
        )
        out[lead + region] += cols[lead + position]
    if full == tuple(size):
        return out
    return out[lead + tuple(slice(p, p + s) for p, s in zip(lo, size))]


# the three convolution ops ----------------------------------------------------------------------


def _needs_grad(node: Op, i: int) -> bool:
    return node.needs_grad(i)


def _bias_dims(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _as_convolution_backward(grad_x, grad_w, x, weight) -> tuple:
    """The input and weight gradients as PyTorch's convolution_backward gives them: one node that takes x and
    the weight, so under create_graph both gradients require grad when either does, and the derivative of the
    input gradient in x (and of the weight gradient in the weight) is undefined ("not used in the graph")."""
    return tuple(None if g is None else depends_on(g, x, weight, undefined=True) for g in (grad_x, grad_w))


def _conv_jvp(op, inputs, outputs, tangents):
    """Conv and its transpose are linear in the input and in the weight separately, and add the bias along the
    channel dim: ``conv(dx, w) + conv(x, dw) + db``."""
    total = multilinear_jvp(op, inputs, outputs, tangents[:2] + (None,) * (len(tangents) - 2), bias=2)
    bias_tangent = tangents[2]
    if bias_tangent is not None:
        bias_tangent = bias_tangent.reshape((-1,) + (1,) * (outputs[0].dim() - 2))
    return add_tangents(total, bias_tangent)


class Conv(Op):
    """``y[n, o] = sum_c,k w[o, c, k] * x_padded[n, c, out*stride + k*dilation] (+ bias[o])``."""

    save_inputs = (0, 1)

    def jvp(self, inputs, outputs, tangents):  # bilinear in (input, weight), plus the bias tangent per channel
        return _conv_jvp(self, inputs, outputs, tangents)

    def name(self) -> str:  # PyTorch's one convolution node, for every dimension, with the bias as an input
        return "ConvolutionBackward0"

    def forward(self, x, weight, bias, geometry):
        self.geometry = geometry
        g = geometry.groups
        o = weight.shape[0]
        cols = im2col(self, x, geometry)
        y = weight.reshape(g, o // g, -1) @ cols
        y = y.reshape((x.shape[0], o) + tuple(geometry.out_size))
        if bias is not None:
            y += bias.reshape((o,) + (1,) * len(geometry.kernel))
        return y.astype(x.dtype, copy=False)  # numpy's bfloat16 matmul gives float32: round once, as PyTorch

    def backward(self, grad):
        x, weight = self.saved_tensors
        geometry = self.geometry
        grad_x = ConvTranspose.apply(grad, weight, None, geometry) if _needs_grad(self, 0) else None
        grad_w = ConvWeight.apply(x, grad, geometry) if _needs_grad(self, 1) else None
        grad_b = grad.sum(_bias_dims(grad.dim())) if _needs_grad(self, 2) else None
        return (*_as_convolution_backward(grad_x, grad_w, x, weight), grad_b)


class ConvTranspose(Op):
    """The adjoint of ``Conv`` in its input: ``gy`` (N, O, *out) to (N, C, *in) (+ bias[c])."""

    save_inputs = (0, 1)

    def jvp(self, inputs, outputs, tangents):  # bilinear in (input, weight), plus the bias tangent per channel
        return _conv_jvp(self, inputs, outputs, tangents)

    def name(self) -> str:  # conv_transpose*: PyTorch's convolution node too
        return "ConvolutionBackward0"

    def forward(self, gy, weight, bias, geometry):
        self.geometry = geometry
        g = geometry.groups
        o = weight.shape[0]
        n = gy.shape[0]
        kernel = tuple(geometry.kernel)
        channels = weight.shape[1] * g
        rows = gy.reshape(n, g, o // g, -1)
        cols = weight.reshape(g, o // g, -1).transpose(0, 2, 1) @ rows
        x = col2im(self, cols.reshape((n, channels) + kernel + tuple(geometry.out_size)), geometry)
        if bias is not None:
            x = x + bias.reshape((channels,) + (1,) * len(kernel))
        return x.astype(gy.dtype, copy=False)  # bfloat16: numpy's matmul gave float32

    def backward(self, grad):
        gy, weight = self.saved_tensors
        geometry = self.geometry
        grad_gy = Conv.apply(grad, weight, None, geometry) if _needs_grad(self, 0) else None
        grad_w = ConvWeight.apply(grad, gy, geometry) if _needs_grad(self, 1) else None
        grad_b = grad.sum(_bias_dims(grad.dim())) if _needs_grad(self, 2) else None
        return (*_as_convolution_backward(grad_gy, grad_w, gy, weight), grad_b)


class ConvWeight(Op):
    """The adjoint of ``Conv`` in its weight: ``gw[o, c, k] = sum_n,out gy[n, o, out] * x_window[n, c, out, k]``."""

    save_inputs = (0, 1)

    def forward(self, x, gy, geometry):
        self.geometry = geometry
        g = geometry.groups
        n, o = gy.shape[:2]
        cols = im2col(self, x, geometry)
        rows = gy.reshape(n, g, o // g, -1)
        gw = (rows @ cols.transpose(0, 1, 3, 2)).sum(axis=0)
        return gw.reshape((o, x.shape[1] // g) + tuple(geometry.kernel)).astype(x.dtype, copy=False)  # bfloat16

    def backward(self, grad):
        x, gy = self.saved_tensors
        geometry = self.geometry
        grad_x = ConvTranspose.apply(gy, grad, None, geometry) if _needs_grad(self, 0) else None
        grad_gy = Conv.apply(x, grad, None, geometry) if _needs_grad(self, 1) else None
        return grad_x, grad_gy


# argument checks -------------------------------------------------------------------------------


def expand_param(value, n: int, name: str) -> tuple:
    """An int or a sequence as an ``n``-tuple (PyTorch's expand_param_if_needed)."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the convolution "
            f"dimensions, but got {name}={list(value)}"
        )
    return value


def _check_input_dims(name: str, input: Tensor, d: int) -> bool:
    """Whether ``input`` is unbatched (``d + 1`` dims); raises unless it has ``d + 1`` or ``d + 2``."""
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(
            f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {name}, but got input of size: "
            f"{list(input.shape)}"
        )
    return input.dim() == d + 1


def _check_tensors(name: str, input: Tensor, weight: Tensor, bias) -> None:
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_type_name(input.dtype)}\'')
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(input)}) and weight type ({legacy_type_name(weight)}) should be the same"
        )
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.name}) and bias type ({bias.dtype.name}) should be the same")


def _check_params(stride, padding, dilation, groups, output_padding=(0,)) -> None:
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _check_weight(input: Tensor, weight: Tensor, groups: int) -> None:
    shape = list(weight.shape)
    if weight.dim() != input.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {shape}, but got "
            f"{input.dim()}-dimensional input of size {list(input.shape)} instead"
        )
    if shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of "
            f"size {shape} instead"
        )
    if shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight "
            f"of size {shape} instead"
        )


def _conv_padding(name: str, padding, kernel: tuple, stride: tuple, dilation: tuple) -> tuple:
    """The padding before the input for ``padding`` = int, tuple, 'valid' or 'same' (extra on the right)."""
    d = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * d
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            return tuple(di * (k - 1) // 2 for k, di in zip(kernel, dilation))
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return expand_param(padding, d, "padding")


def _convolution(name: str, d: int, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    unbatched = _check_input_dims(name, input, d)
    if unbatched:
        input = input.unsqueeze(0)
    _check_tensors(name, input, weight, bias)
    stride = expand_param(stride, d, "stride")
    dilation = expand_param(dilation, d, "dilation")
    same = padding == "same"
    kernel = tuple(weight.shape[2:])
    _check_params(stride, (0,) if isinstance(padding, str) else expand_param(padding, d, "padding"), dilation, groups)
    _check_weight(input, weight, groups)
    lo = _conv_padding(name, padding, kernel, stride, dilation)
    shape, wshape = list(input.shape), list(weight.shape)
    if shape[1] != wshape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {wshape}, expected input{shape} to have {wshape[1] * groups} "
            f"channels, but got {shape[1]} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != wshape[0]):
        raise RuntimeError(
            f"Given weight of size {wshape}, expected bias to be 1-dimensional with {wshape[0]} elements, but got "
            f"bias of size {list(bias.shape)} instead"
        )
    spatial = tuple(shape[2:])
    total = tuple(di * (k - 1) for k, di in zip(kernel, dilation)) if same else tuple(2 * p for p in lo)
    padded_size = tuple(n + t for n, t in zip(spatial, total))
    effective = tuple(di * (k - 1) + 1 for k, di in zip(kernel, dilation))
    if any(p < e for p, e in zip(padded_size, effective)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded_size))}). Kernel size: "
            f"({' x '.join(map(str, effective))}). Kernel size can't be greater than actual input size"
        )
    out = tuple((p - e) // s + 1 for p, e, s in zip(padded_size, effective, stride))
    geometry = WindowGeometry(spatial, out, kernel, stride, lo, dilation, groups)
    result = Conv.apply(input, weight, bias, geometry)
    return result.squeeze(0) if unbatched else result


def _convolution_transpose(name, d, input, weight, bias, stride, padding, output_padding, groups, dilation):
    unbatched = _check_input_dims(name, input, d)
    if unbatched:
        input = input.unsqueeze(0)
    _check_tensors(name, input, weight, bias)
    stride = expand_param(stride, d, "stride")
    padding = expand_param(padding, d, "padding")
    output_padding = expand_param(output_padding, d, "output_padding")
    dilation = expand_param(dilation, d, "dilation")
    _check_params(stride, padding, dilation, groups, output_padding)
    _check_weight(input, weight, groups)
    shape, wshape = list(input.shape), list(weight.shape)
    if shape[1] != wshape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {wshape}, expected input{shape} to have {wshape[0]} channels, "
            f"but got {shape[1]} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != wshape[1] * groups):
        raise RuntimeError(
            f"Given transposed=1, weight of size {wshape}, expected bias to be 1-dimensional with "
            f"{wshape[1] * groups} elements, but got bias of size {list(bias.shape)} instead"
        )
    if any(op >= s and op >= di for op, s, di in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            f"output padding must be smaller than either stride or dilation, but got output_padding="
            f"{list(output_padding)}, stride={list(stride)}, dilation={list(dilation)}"
        )
    kernel = tuple(wshape[2:])
    spatial = tuple(shape[2:])
    out = tuple(
        (n - 1) * s - 2 * p + di * (k - 1) + op + 1
        for n, s, p, di, k, op in zip(spatial, stride, padding, dilation, kernel, output_padding)
    )
    if any(n <= 0 for n in out):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, spatial))}). Calculated output size per "
            f"channel: ({' x '.join(map(str, out))}). Output size is too small"
        )
    geometry = WindowGeometry(out, spatial, kernel, stride, padding, dilation, groups)
    result = ConvTranspose.apply(input, weight, bias, geometry)
    return result.squeeze(0) if unbatched else result


# public API ------------------------------------------------------------------------------------


@autocast_op("lower")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-D cross-correlation over (N, C_in, L) or unbatched (C_in, L); ``padding`` may be 'valid' or 'same'."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("lower")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D cross-correlation over (N, C_in, H, W) or unbatched (C_in, H, W); ``padding`` may be 'valid' or 'same'."""
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("lower")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-D cross-correlation over (N, C_in, D, H, W) or unbatched (C_in, D, H, W)."""
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("lower")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The gradient of conv1d with respect to its input, as an op ("deconvolution"); weight (C_in, C_out/groups, k)."""
    return _convolution_transpose(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@autocast_op("lower")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The gradient of conv2d with respect to its input, as an op; weight (C_in, C_out/groups, kH, kW)."""
    return _convolution_transpose(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@autocast_op("lower")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The gradient of conv3d with respect to its input, as an op; weight (C_in, C_out/groups, kD, kH, kW)."""
    return _convolution_transpose(
        "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


# unfold / fold -----------------------------------------------------------------------------------


class Unfold(Op):
    """im2col: (N, C, *in) to the flattened windows (N, C * prod(kernel), L)."""

    def name(self) -> str:
        return "Im2ColBackward0"

    def forward(self, x, geometry):
        self.geometry = geometry
        cols = im2col(self, x, geometry)
        return cols.reshape(x.shape[0], cols.shape[2], cols.shape[3])

    def backward(self, grad):
        return Fold.apply(grad, self.geometry)


class Fold(Op):
    """col2im, the adjoint of Unfold: overlapping windows add up."""

    def name(self) -> str:
        return "Col2ImBackward0"

    def forward(self, cols, geometry):
        self.geometry = geometry
        n = cols.shape[0]
        kernel, out = tuple(geometry.kernel), tuple(geometry.out_size)
        channels = cols.shape[1] // math.prod(kernel)
        return col2im(self, cols.reshape((n, channels) + kernel + out), geometry)

    def backward(self, grad):
        return Unfold.apply(grad, self.geometry)


def _blocks(name, spatial, kernel_size, dilation, padding, stride) -> WindowGeometry:
    kernel = expand_param(kernel_size, 2, "kernel_size")
    dilation = expand_param(dilation, 2, "dilation")
    padding = expand_param(padding, 2, "padding")
    stride = expand_param(stride, 2, "stride")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_size: {list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride: {list(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation: {list(dilation)}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got padding: {list(padding)}")
    out = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, p, d, k, s in zip(spatial, padding, dilation, kernel,
                                                                               stride))
    if any(o < 1 for o in out):
        raise RuntimeError(
            f"Given input with spatial size {tuple(spatial)}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={padding}, calculated shape of the array of sliding blocks as {out}, but its components "
            f"must be at least one."
        )
    return WindowGeometry(tuple(spatial), out, kernel, stride, padding, dilation)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks (im2col): (N, C, H, W) -> (N, C * kH * kW, L)."""
    if input.dim() not in (3, 4) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
            f"for input, but got: {list(input.shape)}"
        )
    unbatched = input.dim() == 3
    if unbatched:
        input = input.unsqueeze(0)
    geometry = _blocks("unfold", input.shape[2:], kernel_size, dilation, padding, stride)
    result = Unfold.apply(input, geometry)
    return result.squeeze(0) if unbatched else result


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combine sliding local blocks into a tensor, summing overlaps (col2im): (N, C * kH * kW, L) -> (N, C, H, W)."""
    if input.dim() not in (2, 3) or any(n == 0 for n in input.shape[1:]):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
            f"for input, but got: {list(input.shape)}"
        )
    unbatched = input.dim() == 2
    if unbatched:
        input = input.unsqueeze(0)
    output_size = expand_param(output_size, 2, "output_size")
    geometry = _blocks("fold", output_size, kernel_size, dilation, padding, stride)
    kernel = geometry.kernel
    if input.shape[1] % math.prod(kernel):
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={input.shape[1]} and kernel_size={kernel}"
        )
    blocks = math.prod(geometry.out_size)
    if input.shape[2] != blocks:
        raise RuntimeError(
            f"Given output_size={output_size}, kernel_size={kernel}, dilation={geometry.dilation}, "
            f"padding={geometry.padding}, stride={geometry.stride}, expected size of input's dimension 2 to match "
            f"the calculated number of sliding blocks {' * '.join(map(str, geometry.out_size))} = {blocks}, but got "
            f"input.size(2)={input.shape[2]}."
        )
    result = Fold.apply(input, geometry)
    return result.squeeze(0) if unbatched else result


__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
]
