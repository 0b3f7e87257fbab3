"""How an op that reads or makes quantized tensors runs and joins the autograd graph.

``Op.apply`` hands any op with a quantized argument to ``NON_DENSE_IMPLEMENTATIONS``; the quantized ops
of this package run through ``apply_quantized`` instead. It is Op.apply with two differences: a
quantized argument gives its integer array to ``forward`` (its quantizer is in ``self.quantizers``),
and a quantized input or output is a *float* participant of the graph: its gradient is a float32
tensor (the straight-through estimator), so the engine never casts a gradient to an integer dtype.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd import grad_mode
from ..ops.op import check_same_device
from ..tensor import Tensor, from_array
from .qtensor import QTensor

GRAD_DTYPE = _dtype.float32  # the dtype of every gradient of a quantized tensor (dequantize's dtype)


def apply_quantized(cls, *args, **params):
    """Run ``cls`` (an Op subclass) on Tensors/QTensors; ``forward`` sets ``self.out_quantizer`` (or None)
    and returns one array, integer (wrapped as a QTensor) or float (a plain Tensor)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    first = tensors[0]
    for t in tensors[1:]:
        if t._storage.device is not first._storage.device:
            check_same_device(cls, first, t)
    node = cls.__new__(cls)
    node.backend = first._storage.backend
    node.device = first._storage.device
    node.quantizers = tuple(a._quantizer if isinstance(a, QTensor) else None for a in args)
    node.out_quantizer = None
    result = node.forward(*[a._array if isinstance(a, Tensor) else a for a in args], **params)
    if node.out_quantizer is not None:
        out = QTensor._from_array(result, node.backend, node.device, node.out_quantizer)
    else:
        out = from_array(result, node.backend, node.device)
    if grad_mode.state.enabled and any(t.requires_grad for t in tensors):
        record(node, args, out)
    return out


def record(node, args, out: Tensor) -> None:
    """``node._record`` with float32 gradient metadata for quantized inputs and outputs."""
    # _record records nothing for an integer output; a quantized one carries a float32 gradient, so the node is
    # recorded against a zero-stride float32 stand-in of its shape (no quantized op saves its output)
    stand_in = out
    if isinstance(out, QTensor):
        xp = out._storage.backend.xp
        stand_in = from_array(xp.broadcast_to(xp.zeros((), xp.float32), out._array.shape), out._storage.backend,
                              out._storage.device)
    node._record(args, (stand_in,))
    node._arrays, node._uniform = False, None  # saved QTensors are integer arrays: backward needs their Tensors
    node._input_meta = tuple(
        (a._array.shape, GRAD_DTYPE) if isinstance(a, QTensor) and meta is not None else meta
        for a, meta in zip(args, node._input_meta)
    )
    if isinstance(out, QTensor):
        out._grad_fn = node
        out._output_nr = 0
        out._requires_grad = True
