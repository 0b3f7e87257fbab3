"""Views, copies and device moves of quantized tensors: the integer storage is viewed, the quantizer kept.

Every ViewOp of ops/views.py (view, reshape, transpose, permute, indexing, select, narrow, squeeze, ...) gets
a quantized implementation here: the same geometry over the integer storage, the same backward (the
gradient is a float32 tensor, so the dense backward rules apply unchanged). A per-channel quantizer
follows its channel dim through the view; a view that keeps a single channel becomes per-tensor, and one
that mixes channels into another dim is refused (PyTorch refuses strided views of per-channel tensors).
"""

from __future__ import annotations

from .._backends import backend_for
from ..autograd import grad_mode
from ..ops import views as view_ops
from ..ops.conversion import Clone, ToCopy, _parse_to
from ..ops.op import Op, register_non_dense
from ..tensor import from_array
from .dispatch import apply_quantized, record
from .qtensor import PerChannelQuantizer, PerTensorQuantizer, QTensor
from .quantize import channel_shape

VIEW_OPS = (
    view_ops.View, view_ops.Permute, view_ops.Transpose, view_ops.Expand, view_ops.Squeeze, view_ops.Unsqueeze,
    view_ops.Narrow, view_ops.Select, view_ops.Diagonal, view_ops.Index, view_ops.AsStrided,
)


def view_quantizer(x: QTensor, node, params):
    """The quantizer of the view ``node`` of ``x``: the same one, or per-channel parameters re-indexed."""
    quantizer = x._quantizer
    if not isinstance(quantizer, PerChannelQuantizer):
        return quantizer
    if isinstance(node, view_ops.AsStrided):
        raise RuntimeError("Setting strides is possible only on uniformly quantized tensor")
    backend = x._storage.backend
    xp = backend.xp
    shape = x._array.shape
    channels = shape[quantizer.axis]
    ids = xp.ascontiguousarray(
        xp.broadcast_to(xp.arange(channels).reshape(channel_shape(len(shape), quantizer.axis)), shape)
    )
    size, stride, offset = node.region_in_contiguous()
    ids = backend.as_strided(ids.reshape(-1), size, stride, offset)
    if ids.size == 0:
        return quantizer
    varying = [d for d in range(ids.ndim) if ids.shape[d] > 1 and bool((ids != xp.take(ids, [0], axis=d)).any())]
    if len(varying) > 1:
        raise RuntimeError(
            f"{type(node).__name__.lower()}: this view mixes the channels of a per-channel quantized tensor "
            f"(axis {quantizer.axis}, shape {list(shape)}) into other dims; dequantize first"
        )
    if not varying:  # one channel left: its parameters hold for every element
        channel = int(ids.reshape(-1)[0])
        return PerTensorQuantizer(
            quantizer.dtype, quantizer.scales[channel].item(), quantizer.zero_points[channel].item()
        )
    axis = varying[0]
    picked = ids[tuple(slice(None) if d == axis else 0 for d in range(ids.ndim))]
    index = from_array(picked.astype(xp.int64), backend, x._storage.device)
    return PerChannelQuantizer(
        quantizer.dtype, quantizer.scales.index_select(0, index), quantizer.zero_points.index_select(0, index), axis
    )


def _quantized_view(op_cls):
    """The quantized implementation of the ViewOp ``op_cls`` (mirrors ViewOp.apply)."""

    def run(x: QTensor, *params):
        node = op_cls.__new__(op_cls)
        node.input_shape = x._array.shape
        node.params = params
        size, stride, offset = node.geometry(x._array.shape, x.stride(), x._offset, *params)
        out = x._view(size, stride, offset, view_quantizer(x, node, params))
        meta = out._autograd_meta()
        meta.base = x._meta.base if x._meta is not None and x._meta.base is not None else x
        meta.view_version = x._storage.version
        meta.creation = view_ops.view_creation(x)
        if grad_mode.state.enabled and x.requires_grad:
            node.backend = x._storage.backend
            node.device = x._storage.device
            record(node, (x,), out)
        return out

    run.__name__ = f"quantized_{op_cls.__name__.lower()}"
    return run


for _op in VIEW_OPS:
    register_non_dense(_op, "quantized")(_quantized_view(_op))


class QuantizedClone(Op):
    """A copy of the integers with the same quantizer; the gradient passes unchanged."""

    def forward(self, q):
        self.out_quantizer = self.quantizers[0]
        return q.copy()

    def backward(self, grad):
        return grad


@register_non_dense(Clone, "quantized")
def quantized_clone(q: QTensor, memory_format=None) -> QTensor:
    return apply_quantized(QuantizedClone, q)


class QuantizedMove(Op):
    """The same quantized tensor on another device; the gradient moves back."""

    def forward(self, q, device):
        target = backend_for(device)
        quantizer = self.quantizers[0]
        if isinstance(quantizer, PerChannelQuantizer):
            quantizer = PerChannelQuantizer(
                quantizer.dtype, quantizer.scales.to(device), quantizer.zero_points.to(device), quantizer.axis
            )
        self.out_quantizer = quantizer
        self.source_device = self.device
        q = target.from_numpy(self.backend.to_numpy(q))
        self.backend, self.device = target, target.normalize(device)
        return q

    def backward(self, grad):
        return grad.to(self.source_device)


def move_quantized(q: QTensor, device) -> QTensor:
    return apply_quantized(QuantizedMove, q, device=device)


def quantized_to(self: QTensor, *args, **kwargs) -> QTensor:
    """``QTensor.to``: device moves keep the quantization; a dtype change needs ``dequantize()`` first."""
    device, dtype, copy = _parse_to(self, args, kwargs)
    if dtype is not None and dtype is not self.dtype:
        raise RuntimeError(
            f"to(): cannot cast a quantized tensor of dtype {self.dtype} to {dtype}; "
            "use .dequantize() (or .int_repr()) first"
        )
    if device == self.device and not copy:
        return self
    return move_quantized(self, device)


@register_non_dense(ToCopy, "quantized")
def quantized_to_copy(q: QTensor, device, dtype=None) -> QTensor:
    if dtype is not None and dtype is not q.dtype:
        raise RuntimeError(f"to(): cannot cast a quantized tensor of dtype {q.dtype} to {dtype}; dequantize first")
    return move_quantized(q, device)
