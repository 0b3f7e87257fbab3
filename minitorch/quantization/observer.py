"""Observers: modules that watch the values passing through and choose a scale and zero point.

``calculate_qparams`` is PyTorch's ``_calculate_qparams``: the observed range is widened to include 0,
then affine: ``scale = (max - min) / (quant_max - quant_min)``, ``zero_point = quant_min - round(min / scale)``
clamped; symmetric: ``scale = max(|min|, max) / ((quant_max - quant_min) / 2)`` with zero point 0 (128 for
quint8); ``scale`` is at least ``eps`` (float32's).
"""

from __future__ import annotations

from functools import partial

from .. import _dtype
from ..creation import full, tensor, zeros
from ..nn.modules.module import Module
from ..tensor import Tensor
from .qtensor import per_channel_affine, per_channel_symmetric, per_tensor_affine, per_tensor_symmetric

FLOAT32_EPS = 1.1920928955078125e-07


def calculate_qmin_qmax(quant_min, quant_max, dtype, reduce_range: bool) -> tuple[int, int]:
    """PyTorch's defaults: the dtype's range, halved by ``reduce_range``; custom ranges are kept (halved too)."""
    if quant_min is not None and quant_max is not None:
        if quant_min > quant_max:
            raise ValueError("qmin must be less than or equal to qmax")
        return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
    if dtype is _dtype.qint8:
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype is _dtype.quint8:
        return (0, 127) if reduce_range else (0, 255)
    if dtype is _dtype.qint32:
        return -(2**31), 2**31 - 1
    raise ValueError(f"observer: unsupported dtype {dtype}")


class _PartialWrapper:
    """What ``Observer.with_args(...)`` returns: a factory that PyTorch's QConfig calls with no arguments."""

    def __init__(self, factory):
        self.factory = factory

    def __call__(self, *args, **kwargs):
        return self.factory(*args, **kwargs)

    def with_args(self, **kwargs):
        return _PartialWrapper(partial(self.factory, **kwargs))

    def __repr__(self) -> str:
        return f"<_PartialWrapper {self.factory!r}>"


class ObserverBase(Module):
    """Common state: dtype, qscheme, the quantized range and eps."""

    def __init__(self, dtype=_dtype.quint8, qscheme=per_tensor_affine, reduce_range: bool = False,
                 quant_min=None, quant_max=None, eps: float = FLOAT32_EPS, is_dynamic: bool = False, **kwargs):
        super().__init__()
        self.dtype = dtype
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, dtype, reduce_range)
        self.eps = eps

    @classmethod
    def with_args(cls, **kwargs) -> _PartialWrapper:
        return _PartialWrapper(partial(cls, **kwargs))

    def _calculate_qparams(self, min_val: Tensor, max_val: Tensor) -> tuple[Tensor, Tensor]:
        quant_min, quant_max = self.quant_min, self.quant_max
        min_neg = min_val.clamp(max=0.0)
        max_pos = max_val.clamp(min=0.0)
        zero_point = zeros(min_neg.shape, dtype=_dtype.int64, device=min_neg.device)
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            max_pos = (-min_neg).maximum(max_pos)
            scale = (max_pos / (float(quant_max - quant_min) / 2)).clamp(min=self.eps)
            if self.dtype is _dtype.quint8:
                middle = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = full(min_neg.shape, middle, dtype=_dtype.int64, device=min_neg.device)
        else:
            scale = ((max_pos - min_neg) / float(quant_max - quant_min)).clamp(min=self.eps)
            zero_point = (quant_min - (min_neg / scale).round().to(_dtype.int64)).clamp(quant_min, quant_max)
        if scale.dim() == 0:
            scale, zero_point = scale.reshape(1), zero_point.reshape(1)
        return scale.to(_dtype.float32), zero_point


class MinMaxObserver(ObserverBase):
    """Tracks the running minimum and maximum of everything it sees."""

    def __init__(self, dtype=_dtype.quint8, qscheme=per_tensor_affine, reduce_range: bool = False,
                 quant_min=None, quant_max=None, eps: float = FLOAT32_EPS, **kwargs):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))

    def forward(self, x: Tensor) -> Tensor:
        if x.numel() == 0:
            return x
        values = x.detach().to(self.min_val.dtype)
        self._update(values.min(), values.max())
        return x

    def _update(self, low: Tensor, high: Tensor) -> None:
        self.min_val.copy_(self.min_val.minimum(low))
        self.max_val.copy_(self.max_val.maximum(high))

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val.item()}, max_val={self.max_val.item()}"


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving averages of the batch minimum and maximum (``averaging_constant``)."""

    def __init__(self, averaging_constant: float = 0.01, dtype=_dtype.quint8, qscheme=per_tensor_affine,
                 reduce_range: bool = False, quant_min=None, quant_max=None, eps: float = FLOAT32_EPS, **kwargs):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.averaging_constant = averaging_constant

    def _update(self, low: Tensor, high: Tensor) -> None:
        if self.min_val.item() == float("inf") and self.max_val.item() == float("-inf"):
            self.min_val.copy_(low)
            self.max_val.copy_(high)
        else:
            c = self.averaging_constant
            self.min_val.copy_(self.min_val + c * (low - self.min_val))
            self.max_val.copy_(self.max_val + c * (high - self.max_val))


class PerChannelMinMaxObserver(ObserverBase):
    """Minimum and maximum per index of dim ``ch_axis`` (for per-channel weight quantization)."""

    def __init__(self, ch_axis: int = 0, dtype=_dtype.quint8, qscheme=per_channel_affine, reduce_range: bool = False,
                 quant_min=None, quant_max=None, eps: float = FLOAT32_EPS, **kwargs):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", tensor([]))
        self.register_buffer("max_val", tensor([]))

    def forward(self, x: Tensor) -> Tensor:
        if x.numel() == 0:
            return x
        values = x.detach().to(self.min_val.dtype).movedim(self.ch_axis, 0).flatten(1)
        low, high = values.min(dim=1).values, values.max(dim=1).values
        if self.min_val.numel() == 0:
            self.min_val, self.max_val = low.clone(), high.clone()
        else:
            self._update(low, high)
        return x

    def _update(self, low: Tensor, high: Tensor) -> None:
        self.min_val.copy_(self.min_val.minimum(low))
        self.max_val.copy_(self.max_val.maximum(high))

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        return self._calculate_qparams(self.min_val, self.max_val)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel exponential moving averages of the minimum and maximum."""

    def __init__(self, averaging_constant: float = 0.01, ch_axis: int = 0, dtype=_dtype.quint8,
                 qscheme=per_channel_affine, reduce_range: bool = False, quant_min=None, quant_max=None,
                 eps: float = FLOAT32_EPS, **kwargs):
        super().__init__(ch_axis, dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.averaging_constant = averaging_constant

    def _update(self, low: Tensor, high: Tensor) -> None:
        c = self.averaging_constant
        self.min_val.copy_(self.min_val + c * (low - self.min_val))
        self.max_val.copy_(self.max_val + c * (high - self.max_val))


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=_dtype.qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=_dtype.qint8, qscheme=per_channel_symmetric
)
