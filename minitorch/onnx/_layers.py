"""ONNX translations of the layers' ops: linear maps, convolutions, pooling, normalization, embedding, padding.
"""

from __future__ import annotations

import math

from .._dtype import int64
from ._translation import constant_array, operand, output, registrar, wrap_dims
from .errors import UnsupportedOperatorError

TRANSLATIONS: dict = {}
translates = registrar(TRANSLATIONS)


# linear algebra ------------------------------------------------------------------------------------------
@translates("Linear")
def _linear(g, step):
    x, weight = step.args[:2]
    bias = step.args[2] if len(step.args) > 2 else None
    if weight.dim() == 2 and x.dim() == 2:
        inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
        return [g.node("Gemm", inputs, transB=1)]
    w = g.value(weight)
    if weight.dim() == 2:
        w = g.node("Transpose", [w], perm=[1, 0])
    y = g.node("MatMul", [g.value(x), w])
    return [y if bias is None else g.node("Add", [y, g.value(bias)])]


@translates("Matmul")
def _matmul(g, step):
    return [g.node("MatMul", [g.value(step.args[0]), g.value(step.args[1])])]


@translates("Einsum")
def _einsum(g, step):
    return [g.node("Einsum", [g.value(a) for a in step.args], equation=step.params["equation"])]


# convolution, pooling, normalization ---------------------------------------------------------------------
def _window_attributes(geometry, with_dilation: bool = True) -> dict:
    """kernel_shape, strides, pads (before, then after: what the windows reach past the input's end) and
    dilations of a WindowGeometry."""
    after = [max(0, e - n - p) for e, n, p in zip(geometry.extent, geometry.in_size, geometry.padding)]
    attributes = {"kernel_shape": list(geometry.kernel), "strides": list(geometry.stride),
                  "pads": list(geometry.padding) + after}
    if with_dilation and any(d != 1 for d in geometry.dilation):
        attributes["dilations"] = list(geometry.dilation)
    return attributes


@translates("Conv")
def _conv(g, step):
    x, weight, bias, geometry = step.args[:4]
    inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    return [g.node("Conv", inputs, group=geometry.groups, **_window_attributes(geometry))]


@translates("MaxPool")
def _max_pool(g, step):
    x, plan = step.args[:2]
    geometry = getattr(plan, "geometry", None)
    if geometry is not None:
        return [g.node("MaxPool", [g.value(x)], **_window_attributes(geometry)), None]
    # adaptive: windows of equal size when each input size is a multiple of the output size
    if any(n % o for n, o in zip(plan.in_size, plan.out_size)):
        raise UnsupportedOperatorError("minitorch::MaxPool (adaptive_max_pool with an output size that does not "
                                       "divide the input size)", g.opset, None)
    kernel = [n // o for n, o in zip(plan.in_size, plan.out_size)]
    return [g.node("MaxPool", [g.value(x)], kernel_shape=kernel, strides=kernel), None]


@translates("WindowSum")
def _window_sum(g, step):
    """avg_pool: the sum of each window (an average over the whole kernel times its size), times ``scale``."""
    x, geometry, scale = step.args[:3]
    dtype = output(step).dtype
    if any(d != 1 for d in geometry.dilation) and g.opset < 19:
        raise UnsupportedOperatorError("minitorch::WindowSum (dilated avg_pool)", g.opset, 19)
    y = g.node("AveragePool", [g.value(x)], count_include_pad=1, **_window_attributes(geometry, g.opset >= 19))
    y = g.node("Mul", [y, g.scalar(math.prod(geometry.kernel), dtype)])
    if scale is None:
        return [y]
    if isinstance(scale, (int, float)):
        return [g.node("Mul", [y, g.scalar(scale, dtype)])]
    return [g.node("Mul", [y, g.initializer(constant_array(scale, dtype), "pool_scale")])]


@translates("AlongDim")
def _along_dim(g, step):
    """adaptive_avg_pool along one dim: a matrix (out, in) applied to that dim, as a MatMul on the last dim."""
    x, dim, matrix = step.args[:3]
    ndim = x.dim()
    perm = list(range(ndim))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    y = g.node("Transpose", [g.value(x)], perm=perm) if dim != ndim - 1 else g.value(x)
    y = g.node("MatMul", [y, g.initializer(constant_array(matrix, x.dtype).T.copy(), "pool_matrix")])
    return [g.node("Transpose", [y], perm=perm) if dim != ndim - 1 else y]


@translates("Normalize")
def _normalize(g, step):
    """(x - mean) / sqrt(var + eps) over ``dims``, biased variance (layer, group and instance norm)."""
    x, dims, eps = step.args[:3]
    dtype = output(step).dtype
    axes = wrap_dims(dims, x.dim())
    value = g.value(x)
    centered = g.node("Sub", [value, g.reduce("ReduceMean", value, axes, True)])
    var = g.reduce("ReduceMean", g.node("Mul", [centered, centered]), axes, True)
    return [g.node("Div", [centered, g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, dtype)])])])]


@translates("NormalizeWithRunningStats")
def _normalize_running(g, step):
    x, mean, var, eps = step.args[:4]
    dtype = output(step).dtype
    centered = g.node("Sub", [g.value(x), operand(g, mean, dtype)])
    denominator = g.node("Sqrt", [g.node("Add", [operand(g, var, dtype), g.scalar(eps, dtype)])])
    return [g.node("Div", [centered, denominator])]


@translates("NativeAffine")
def _native_affine(g, step):
    y, weight, bias = step.args[:3]
    out = g.value(y)
    if weight is not None:
        out = g.node("Mul", [out, g.value(weight)])
    if bias is not None:
        out = g.node("Add", [out, g.value(bias)])
    return [out]


@translates("Embedding")
def _embedding(g, step):
    weight, indices = step.args[:2]
    return [g.node("Gather", [g.value(weight), operand(g, indices, int64)], axis=0)]


@translates("ConstantPad")
def _constant_pad(g, step):
    x, pads, value = step.args[:3]
    onnx_pads = [p[0] for p in pads] + [p[1] for p in pads]
    return [g.node("Pad", [g.value(x), g.ints(onnx_pads), g.scalar(value, x.dtype)], mode="constant")]


@translates("ConvTranspose")
def _conv_transpose(g, step):
    """The adjoint of the convolution with ``geometry``: its input is that convolution's output. What the
    windows reach past the result's end is padding to drop; a result longer than the windows reach (PyTorch's
    output_padding) is ONNX's output_padding."""
    x, weight, bias, geometry = step.args[:4]
    inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    reach = [e - p for e, p in zip(geometry.extent, geometry.padding)]
    attributes = {"kernel_shape": list(geometry.kernel), "strides": list(geometry.stride),
                  "pads": list(geometry.padding) + [max(0, r - n) for r, n in zip(reach, geometry.in_size)],
                  "output_padding": [max(0, n - r) for r, n in zip(reach, geometry.in_size)]}
    if any(d != 1 for d in geometry.dilation):
        attributes["dilations"] = list(geometry.dilation)
    return [g.node("ConvTranspose", inputs, group=geometry.groups, **attributes)]
