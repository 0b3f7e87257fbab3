"""Modules of the quantization flow: FakeQuantize, the stubs, QAT Linear and the int8 Linear.

Eager-mode QAT as in ``torch.ao.quantization``: ``QuantStub``/``DeQuantStub`` mark where the quantized part
of a model starts and ends; ``prepare_qat`` swaps ``nn.Linear`` for ``qat.Linear`` (weights pass through a
FakeQuantize) and adds a FakeQuantize after each observed module; ``convert`` turns them into ``Quantize``,
``quantized.Linear`` (int8 weights, int32 accumulation) and ``DeQuantize``.
"""

from __future__ import annotations

from functools import partial

from .. import _dtype
from ..creation import tensor, zeros
from ..nn import functional as F
from ..nn.modules.linear import Linear as FloatLinear
from ..nn.modules.module import Module
from ..tensor import Tensor
from .fake_quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine
from .kernels import quantized_linear
from .observer import MovingAverageMinMaxObserver, _PartialWrapper
from .qtensor import QTensor, per_channel_affine, per_channel_symmetric
from .quantize import quantize_per_channel, quantize_per_tensor


class FakeQuantize(Module):
    """Observe (``observer_enabled``), then fake-quantize (``fake_quant_enabled``) with the observed qparams."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        self.is_per_channel = self.qscheme in (per_channel_affine, per_channel_symmetric)
        self.register_buffer("fake_quant_enabled", tensor([1], dtype=_dtype.uint8))
        self.register_buffer("observer_enabled", tensor([1], dtype=_dtype.uint8))
        self.register_buffer("scale", tensor([1.0]))
        self.register_buffer("zero_point", tensor([0], dtype=_dtype.int32))

    @classmethod
    def with_args(cls, **kwargs) -> _PartialWrapper:
        return _PartialWrapper(partial(cls, **kwargs))

    def enable_fake_quant(self, enabled: bool = True) -> FakeQuantize:
        self.fake_quant_enabled[0] = 1 if enabled else 0
        return self

    def disable_fake_quant(self) -> FakeQuantize:
        return self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True) -> FakeQuantize:
        self.observer_enabled[0] = 1 if enabled else 0
        return self

    def disable_observer(self) -> FakeQuantize:
        return self.enable_observer(False)

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        return self.activation_post_process.calculate_qparams()

    def forward(self, x: Tensor) -> Tensor:
        if self.observer_enabled[0].item() == 1:
            self.activation_post_process(x.detach())
            scale, zero_point = self.calculate_qparams()
            if self.scale.shape != scale.shape:
                self.scale, self.zero_point = scale.clone(), zero_point.to(_dtype.int32)
            else:
                self.scale.copy_(scale)
                self.zero_point.copy_(zero_point)
        if self.fake_quant_enabled[0].item() == 1:
            if self.is_per_channel:
                return fake_quantize_per_channel_affine(
                    x, self.scale, self.zero_point, self.ch_axis, self.quant_min, self.quant_max
                )
            return fake_quantize_per_tensor_affine(
                x, self.scale.item(), int(self.zero_point.item()), self.quant_min, self.quant_max
            )
        return x

    def extra_repr(self) -> str:
        return (f"fake_quant_enabled={self.fake_quant_enabled.tolist()}, observer_enabled="
                f"{self.observer_enabled.tolist()}, quant_min={self.quant_min}, quant_max={self.quant_max}, "
                f"dtype={self.dtype}, qscheme={self.qscheme}, ch_axis={self.ch_axis}")


class QuantStub(Module):
    """Marks where float values enter the quantized part; becomes ``Quantize`` after ``convert``."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x


class DeQuantStub(Module):
    """Marks where quantized values leave; becomes ``DeQuantize`` after ``convert``."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x


class Quantize(Module):
    """Float -> quantized with a fixed scale and zero point, kept as buffers (``scale`` float32 [1],
    ``zero_point`` int64 [1]) as in PyTorch, so they are in the state dict."""

    def __init__(self, scale: float, zero_point: int, dtype=_dtype.quint8, factory_kwargs=None):
        super().__init__()
        factory_kwargs = dict(factory_kwargs or {})
        device = factory_kwargs.get("device")
        self.register_buffer("scale", tensor([scale], dtype=factory_kwargs.get("dtype"), device=device))
        self.register_buffer("zero_point", tensor([zero_point], dtype=_dtype.int64, device=device))
        self.dtype = dtype

    def forward(self, x: Tensor) -> QTensor:
        return quantize_per_tensor(x, float(self.scale.item()), int(self.zero_point.item()), self.dtype)

    @staticmethod
    def from_float(mod: Module, use_precomputed_fake_quant: bool = False) -> Quantize:
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), int(zero_point.long().item()), mod.activation_post_process.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(Module):
    """Quantized -> float32."""

    def forward(self, x: Tensor) -> Tensor:
        return x.dequantize()

    @classmethod
    def from_float(cls, mod: Module) -> DeQuantize:
        return cls()


class QATLinear(FloatLinear):
    """``nn.Linear`` whose weight passes through ``weight_fake_quant`` (``torch.ao.nn.qat.Linear``)."""

    _FLOAT_MODULE = FloatLinear

    def __init__(self, in_features: int, out_features: int, bias: bool = True, qconfig=None, device=None,
                 dtype=None) -> None:
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        if qconfig is None:
            raise ValueError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: FloatLinear) -> QATLinear:
        qat = cls(mod.in_features, mod.out_features, mod.bias is not None, qconfig=mod.qconfig)
        qat.weight = mod.weight
        qat.bias = mod.bias
        return qat

    def _get_name(self) -> str:
        return "Linear"


class LinearPackedParams(Module):
    """The (weight, bias) pair of a quantized Linear (``torch.ao.nn.quantized.modules.linear.LinearPackedParams``).

    PyTorch packs them for FBGEMM; minitorch keeps the quantized weight and float bias as they are. The state
    dict has PyTorch's version-3 layout, ``dtype`` and ``_packed_params`` = ``(weight, bias)``, so the state
    dicts of converted models load in both libraries."""

    _version = 3

    def __init__(self, dtype=_dtype.qint8) -> None:
        super().__init__()
        if dtype is not _dtype.qint8:
            raise RuntimeError(f"Unsupported dtype on quantized linear: {dtype} (minitorch supports torch.qint8)")
        self.dtype = dtype
        self.set_weight_bias(quantize_per_tensor(zeros(1, 1), 1.0, 0, dtype), None)

    def set_weight_bias(self, weight: QTensor, bias: Tensor | None) -> None:
        if not isinstance(weight, QTensor) or weight.dtype is not _dtype.qint8:
            raise RuntimeError(f"quantized::linear_prepack: the weight must be a torch.qint8 tensor, got "
                               f"{getattr(weight, 'dtype', type(weight).__name__)}")
        if weight.dim() != 2:
            raise RuntimeError(f"quantized::linear_prepack: the weight must be 2-D, got {weight.dim()} dims")
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
            raise RuntimeError(f"quantized::linear_prepack: bias of shape {list(bias.shape)} does not match weight "
                               f"of shape {list(weight.shape)}")
        # PyTorch's prepack copies the values; later writes to the arguments do not reach the module
        self._packed_params = (weight.detach().clone(), None if bias is None else bias.detach().clone())

    def _weight_bias(self) -> tuple:
        return self._packed_params

    def forward(self, x: Tensor) -> Tensor:
        return x

    def _apply(self, fn, recurse: bool = True) -> LinearPackedParams:
        """Device moves (``model.to(device)``) reach the weight and bias, which are not buffers."""
        weight, bias = self._packed_params
        self._packed_params = (fn(weight), None if bias is None else fn(bias))
        return super()._apply(fn, recurse)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        """PyTorch's versions: 1 (``weight``, ``bias``), 2 (and ``dtype``), 3 (``dtype``, ``_packed_params``)."""
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            self.dtype = _dtype.qint8
        else:
            self.dtype = _pop(state_dict, prefix + "dtype", missing_keys, self.dtype)
        if version is None or version < 3:
            weight = _pop(state_dict, prefix + "weight", missing_keys)
            bias = _pop(state_dict, prefix + "bias", missing_keys)
            if weight is not None:
                self.set_weight_bias(weight, bias)
        else:
            packed = _pop(state_dict, prefix + "_packed_params", missing_keys)
            if packed is not None:
                weight, bias = packed
                self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self) -> str:
        return repr(self._weight_bias())


def _pop(state_dict, key: str, missing_keys: list, default=None):
    """``state_dict.pop(key)``; a missing key is reported as missing (PyTorch raises a KeyError instead)."""
    if key in state_dict:
        return state_dict.pop(key)
    missing_keys.append(key)
    return default


class QuantizedLinear(Module):
    """int8 Linear: quantized input (quint8) x int8 weight (per tensor or per channel) -> int32 -> requantized
    output with ``scale``/``zero_point`` (``torch.ao.nn.quantized.Linear``, its state dict layout too)."""

    _version = 3
    _FLOAT_MODULE = FloatLinear

    def __init__(self, in_features: int, out_features: int, bias_: bool = True, dtype=_dtype.qint8) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        weight = quantize_per_tensor(zeros(out_features, in_features), 1.0, 0, dtype)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(weight, zeros(out_features) if bias_ else None)
        self.scale, self.zero_point = 1.0, 0

    def _weight_bias(self) -> tuple:
        return self._packed_params._weight_bias()

    def weight(self) -> QTensor:
        return self._weight_bias()[0]

    def bias(self) -> Tensor | None:
        return self._weight_bias()[1]

    def set_weight_bias(self, weight: QTensor, bias: Tensor | None) -> None:
        self._packed_params.set_weight_bias(weight, bias)

    def forward(self, x: QTensor) -> QTensor:
        weight, bias = self._weight_bias()
        return quantized_linear(x, weight, bias, self.scale, self.zero_point)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = tensor(self.scale)
        destination[prefix + "zero_point"] = tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        scale = _pop(state_dict, prefix + "scale", missing_keys)
        zero_point = _pop(state_dict, prefix + "zero_point", missing_keys)
        if scale is not None:
            self.scale = float(scale)
        if zero_point is not None:
            self.zero_point = int(zero_point)
        version = local_metadata.get("version", None)
        if (version is None or version == 1) and prefix + "weight" in state_dict:
            # version 1 kept weight and bias here; they now belong to the _packed_params submodule
            state_dict[prefix + "_packed_params.weight"] = state_dict.pop(prefix + "weight")
            state_dict[prefix + "_packed_params.bias"] = state_dict.pop(prefix + "bias", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> QuantizedLinear:
        """From a ``qat.Linear`` (or an observed ``nn.Linear``): weight quantized with its fake-quant's
        qparams, output qparams from its ``activation_post_process``."""
        weight_post_process = getattr(mod, "weight_fake_quant", None)
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        if not use_precomputed_fake_quant:
            weight_post_process(mod.weight.detach())
        w_scale, w_zero_point = weight_post_process.calculate_qparams()
        weight = mod.weight.detach().float()
        if weight_post_process.qscheme in (per_channel_affine, per_channel_symmetric):
            qweight = quantize_per_channel(weight, w_scale.double(), w_zero_point.long(), 0, weight_post_process.dtype)
        else:
            qweight = quantize_per_tensor(weight, w_scale.item(), int(w_zero_point.item()), weight_post_process.dtype)
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        qlinear = cls(mod.in_features, mod.out_features, mod.bias is not None, dtype=weight_post_process.dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale, qlinear.zero_point = float(scale), int(zero_point)
        return qlinear

    def _get_name(self) -> str:
        return "QuantizedLinear"

    def __repr__(self) -> str:
        """Without the packed (weight, bias) child, as PyTorch prints it."""
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}")


class QuantizedReLU(Module):
    """ReLU of a quantized tensor (keeps its scale and zero point)."""

    def forward(self, x: QTensor) -> QTensor:
        return F.relu(x)

    @classmethod
    def from_float(cls, mod: Module) -> QuantizedReLU:
        return cls()

    def _get_name(self) -> str:
        return "QuantizedReLU"
