"""QTensor: a tensor of a quantized dtype (qint8, quint8, qint32).

The storage holds the integer representation (int8, uint8, int32); the tensor carries a quantizer:
one scale and zero point (``per_tensor_affine``) or one per channel along ``axis``
(``per_channel_affine``). The real value of an element is ``(q - zero_point) * scale``. Views share
the integer storage and keep the quantizer. Ops on a QTensor are routed by ``Op.apply`` to the quantized
implementations registered in this package (``_dense = False``); any other op raises NotImplementedError.
"""

from __future__ import annotations

import math

from .. import _dtype
from ..tensor import Tensor, from_array


class qscheme:
    """A quantization scheme (``torch.per_tensor_affine``, ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")


class PerTensorQuantizer:
    """One ``scale`` (a Python float, PyTorch keeps a double) and ``zero_point`` for every element."""

    __slots__ = ("dtype", "scale", "zero_point")
    qscheme = per_tensor_affine

    def __init__(self, dtype: _dtype.dtype, scale: float, zero_point: int):
        self.dtype, self.scale, self.zero_point = dtype, float(scale), int(zero_point)


class PerChannelQuantizer:
    """``scales`` (float64 Tensor) and ``zero_points`` (int64 Tensor), one per index of dim ``axis``."""

    __slots__ = ("dtype", "scales", "zero_points", "axis")
    qscheme = per_channel_affine

    def __init__(self, dtype: _dtype.dtype, scales: Tensor, zero_points: Tensor, axis: int):
        self.dtype, self.scales, self.zero_points, self.axis = dtype, scales, zero_points, int(axis)


def _wrong_family(expected: str, got) -> RuntimeError:
    return RuntimeError(
        f"Expected quantizer->qscheme() == {expected} to be true, but got false. (this tensor's qscheme is {got})"
    )


class QTensor(Tensor):
    """A quantized tensor: integer storage plus a quantizer (see the module docstring)."""

    __slots__ = ("_quantizer",)
    _dense = False
    _kind = "quantized"
    is_quantized = True

    # construction --------------------------------------------------------------------------------
    @staticmethod
    def _from_array(array, backend, device, quantizer) -> QTensor:
        """A QTensor owning the integer array ``array`` (a fresh kernel result)."""
        t = from_array(array, backend, device, QTensor)
        t._quantizer = quantizer
        return t

    def _alias(self) -> QTensor:
        t = QTensor._make(self._array, self._storage, self._offset)
        t._quantizer = self._quantizer
        return t

    def _view(self, size, stride, offset, quantizer=None) -> QTensor:
        storage = self._storage
        t = self._alias()
        t._array = storage.backend.as_strided(storage.data, size, stride, offset)
        t._offset = offset
        if quantizer is not None:
            t._quantizer = quantizer
        return t

    # dtype and quantization parameters -------------------------------------------------------------
    @property
    def dtype(self) -> _dtype.dtype:
        return self._quantizer.dtype

    def is_floating_point(self) -> bool:
        return False

    def qscheme(self) -> qscheme:
        return self._quantizer.qscheme

    def q_scale(self) -> float:
        if not isinstance(self._quantizer, PerTensorQuantizer):
            raise _wrong_family("kPerTensorAffine", self.qscheme())
        return self._quantizer.scale

    def q_zero_point(self) -> int:
        if not isinstance(self._quantizer, PerTensorQuantizer):
            raise _wrong_family("kPerTensorAffine", self.qscheme())
        return self._quantizer.zero_point

    def q_per_channel_scales(self) -> Tensor:
        if not isinstance(self._quantizer, PerChannelQuantizer):
            raise _wrong_family("kPerChannelAffine", self.qscheme())
        return self._quantizer.scales.clone()

    def q_per_channel_zero_points(self) -> Tensor:
        if not isinstance(self._quantizer, PerChannelQuantizer):
            raise _wrong_family("kPerChannelAffine", self.qscheme())
        return self._quantizer.zero_points.clone()

    def q_per_channel_axis(self) -> int:
        if not isinstance(self._quantizer, PerChannelQuantizer):
            raise _wrong_family("kPerChannelAffine", self.qscheme())
        return self._quantizer.axis

    def int_repr(self) -> Tensor:
        """The integers as a new uint8/int8/int32 tensor (a copy, as in PyTorch; no gradient)."""
        return from_array(self._array.copy(), self._storage.backend, self._storage.device)

    # autograd: a deliberate extension of PyTorch (docs/quantization.md) ----------------------------
    def requires_grad_(self, requires_grad: bool = True) -> QTensor:
        """Quantized tensors may require grad: gradients reach them as float32 tensors (straight-through)."""
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        self._requires_grad = bool(requires_grad)
        return self

    # values --------------------------------------------------------------------------------------
    def item(self) -> float:
        """The dequantized value of a one-element tensor (as PyTorch)."""
        return self.dequantize().item()

    def tolist(self):
        return self.dequantize().tolist()

    def numpy(self, *, force: bool = False):
        raise TypeError(f"Got unsupported ScalarType {self.dtype}: call .int_repr() or .dequantize() first")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Got unsupported ScalarType {self.dtype}: call .int_repr() or .dequantize() first")

    def __deepcopy__(self, memo):
        result = self.detach().clone()
        if self._requires_grad and self.grad_fn is None:
            result.requires_grad_(True)
        memo[id(self)] = result
        return result


def check_quantized_dtype(dtype, fn: str) -> None:
    if not isinstance(dtype, _dtype.dtype) or not dtype.is_quantized:
        raise RuntimeError(
            f"{fn}: expected a quantized dtype (torch.quint8, torch.qint8 or torch.qint32), got {dtype}"
        )


def check_scale(scale: float, fn: str) -> None:
    """minitorch rejects scale <= 0 (PyTorch accepts it and produces inf/nan; docs/quantization.md)."""
    if not (scale > 0 and math.isfinite(scale)):
        raise RuntimeError(f"{fn}: scale must be a positive finite number, got {scale}")


def check_zero_point(zero_point: int, dtype, fn: str) -> None:
    """PyTorch's checkZeroPoint messages."""
    qmin, qmax = _dtype.QUANTIZED_RANGES[dtype]
    if zero_point > qmax:
        raise RuntimeError(f"{fn} zero_point {zero_point} is above upper bound.")
    if zero_point < qmin:
        raise RuntimeError(f"{fn} zero_point {zero_point} is below lower bound.")
