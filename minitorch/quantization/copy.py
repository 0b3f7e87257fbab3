"""``copy_`` into and out of quantized tensors, with PyTorch's rules (aten Copy.cpp, quantized_copy_from_float_).

- quantized <- quantized: same qscheme and dtype; ``src``'s integers are broadcast into ``self`` and ``self``
  takes ``src``'s quantizer (so the real values are ``src``'s). On a view only the view's quantizer changes,
  as in PyTorch.
- quantized <- float32: ``src`` (same shape, both contiguous) is quantized with ``self``'s quantizer,
  per tensor or per channel, with quantize_per_tensor/_per_channel's arithmetic.
- float <- quantized: refused (dequantize first).

This is what ``load_state_dict`` uses to write a saved quantized tensor into a module's. Gradients follow
minitorch's straight-through extension (docs/quantization.md): ``src`` gets the gradient unchanged from a
quantized source, masked where quantizing clamped from a float one; the old values of ``self`` get none.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd import grad_mode
from ..ops.inplace import Copy, run_inplace
from ..ops.op import Op, register_non_dense
from ..tensor import Tensor
from .dispatch import apply_quantized
from .qtensor import PerChannelQuantizer, QTensor
from .quantize import channel_shape, clamp_to_int, round_to_grid

_NOT_SAME_DTYPE = (
    "Expected self.scalar_type() == src.scalar_type() to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def _broadcast_error(self_shape, src_shape) -> RuntimeError | None:
    """PyTorch's TensorIterator message when ``src`` does not broadcast to ``self`` (None when it does)."""
    if len(src_shape) > len(self_shape):
        return RuntimeError(
            f"output with shape {list(self_shape)} doesn't match the broadcast shape {list(src_shape)}"
        )
    for i in range(1, len(src_shape) + 1):
        a, b = self_shape[-i], src_shape[-i]
        if b not in (1, a):
            return RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension "
                f"{len(self_shape) - i}"
            )
    return None


class QuantizedCopy(Op):
    """``self.copy_(src)`` out of place: the new integers of self and the quantizer they are read with."""

    def forward(self, x, src):
        xp = self.xp
        quantizer, src_quantizer = self.quantizers
        if src_quantizer is not None:  # quantized <- quantized: the integers and their quantizer
            self.mask = None
            self.out_quantizer = src_quantizer
            return xp.broadcast_to(src, x.shape).astype(x.dtype, copy=True)
        if isinstance(quantizer, PerChannelQuantizer):
            shape = channel_shape(x.ndim, quantizer.axis)
            inv_scale = xp.float32(1.0) / quantizer.scales._array.astype(xp.float32).reshape(shape)
            zero_point = quantizer.zero_points._array.astype(xp.float32).reshape(shape)
        else:
            inv_scale = xp.float32(1.0) / xp.float32(quantizer.scale)
            zero_point = xp.float32(quantizer.zero_point)
        shifted = round_to_grid(xp, src * inv_scale, zero_point, zero_point_first=True)
        qmin, qmax = _dtype.QUANTIZED_RANGES[quantizer.dtype]
        self.mask = (shifted >= qmin) & (shifted <= qmax)
        self.out_quantizer = quantizer
        return clamp_to_int(self, shifted, quantizer.dtype)

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"  # PyTorch's name (the class is CopyBackwards)

    def backward(self, grad):
        src_grad = grad if self.mask is None else grad * self.constant(self.mask)
        return grad.new_zeros(()).expand(grad.shape), src_grad


def _check(self: QTensor, src: Tensor) -> None:
    """PyTorch's checks, in its order."""
    if isinstance(src, QTensor):
        if src.qscheme() is not self.qscheme():
            raise RuntimeError("Quantized Copy only works with same qscheme")
        if src.dtype is not self.dtype:
            raise RuntimeError(_NOT_SAME_DTYPE)
        error = _broadcast_error(self.shape, src.shape)
        if error is not None:
            raise error
        return
    if src.dtype is not _dtype.float32:
        raise RuntimeError("Quantized copy only works with kFloat as source Tensor")
    if not (self.is_contiguous() and src.is_contiguous()):
        raise RuntimeError("Quantized copy only works with contiguous and NHWC Tensors")
    if self.shape != src.shape:
        raise RuntimeError("Quantized copy only works with Tensors with the same shape")


def _copy(self: QTensor, src: Tensor) -> QTensor:
    return apply_quantized(QuantizedCopy, self, src)


def copy_(self: QTensor, src, non_blocking: bool = False) -> QTensor:
    """``QTensor.copy_``: PyTorch's quantized copy (module docstring); returns self."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not {type(src).__name__}")
    if src.device != self.device:
        src = src.to(self.device)
    _check(self, src)
    if (grad_mode.state.enabled and (self.requires_grad or src.requires_grad) and self._meta is not None
            and self._meta.base is not None):
        raise RuntimeError(
            "copy_: minitorch does not record a write through a view of a quantized tensor in an autograd graph; "
            "copy into the whole tensor, or under torch.no_grad()"
        )
    quantizer = src._quantizer if isinstance(src, QTensor) else self._quantizer
    run_inplace(self, _copy, (src,), {}, "copy_")
    self._quantizer = quantizer
    return self


@register_non_dense(Copy, "quantized")
def _copy_with_quantized(self: Tensor, src, **params):
    """The dense ``copy_``/``fill_`` reached a quantized tensor: PyTorch's refusal for float <- quantized; minitorch
    has no quantized ``fill_``/``zero_`` (PyTorch has ``fill_`` only)."""
    if isinstance(self, QTensor):
        raise NotImplementedError(
            "fill_/zero_: minitorch has no quantized kernel for them; copy_ a float32 tensor of the values instead"
        )
    raise RuntimeError(
        "Copying from quantized Tensor to non-quantized Tensor is not allowed, please use dequantize to get a "
        "float Tensor from a quantized Tensor"
    )
