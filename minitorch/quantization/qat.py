"""The eager-mode QAT flow of ``torch.ao.quantization``: QConfig, prepare_qat, convert.

    model.qconfig = get_default_qat_qconfig("x86")
    prepared = prepare_qat(model.train())      # nn.Linear -> qat.Linear, FakeQuantize after observed modules
    ...train prepared...
    int8_model = convert(prepared.eval())      # QuantStub -> Quantize, qat.Linear -> quantized Linear, ...
"""

from __future__ import annotations

import copy
from typing import NamedTuple

from .. import _dtype
from ..nn.modules.activation import ReLU
from ..nn.modules.linear import Linear
from ..nn.modules.module import Module
from .modules import (
    DeQuantize,
    DeQuantStub,
    FakeQuantize,
    QATLinear,
    Quantize,
    QuantizedLinear,
    QuantStub,
)
from .observer import MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver
from .qtensor import per_channel_symmetric, per_tensor_affine


class QConfig(NamedTuple):
    """Factories for the activation and weight fake-quantizers (or observers)."""

    activation: object
    weight: object


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=_dtype.quint8,
    qscheme=per_tensor_affine, reduce_range=True,
)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=_dtype.qint8,
    qscheme=per_channel_symmetric, reduce_range=False, ch_axis=0,
)


def get_default_qat_qconfig(backend: str = "x86", version: int = 1) -> QConfig:
    """PyTorch's default QAT qconfig: quint8 activations (7-bit range on x86/fbgemm, as PyTorch) and
    per-channel symmetric qint8 weights."""
    if backend not in ("x86", "fbgemm", "qnnpack", "onednn"):
        raise AssertionError(f"backend: {backend} not supported. backend must be one of ['x86', 'fbgemm', 'qnnpack', "
                             "'onednn']")
    reduce_range = backend in ("x86", "fbgemm")
    activation = FakeQuantize.with_args(
        observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=_dtype.quint8,
        qscheme=per_tensor_affine, reduce_range=reduce_range,
    )
    return QConfig(activation=activation, weight=default_per_channel_weight_fake_quant)


DEFAULT_QAT_MODULE_MAPPINGS = {Linear: QATLinear}
DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: Quantize, DeQuantStub: DeQuantize, QATLinear: QuantizedLinear, Linear: QuantizedLinear,
}
OBSERVED_MODULES = (QuantStub, QATLinear, Linear, ReLU)  # modules whose output gets a FakeQuantize


def propagate_qconfig_(module: Module, qconfig=None) -> None:
    """Give every submodule its parent's ``qconfig`` unless it has its own."""
    qconfig = getattr(module, "qconfig", qconfig)
    if qconfig is not None:
        module.qconfig = qconfig
    for child in module.children():
        propagate_qconfig_(child, qconfig)


def _swap_modules(module: Module, mapping: dict) -> None:
    for name, child in list(module.named_children()):
        target = mapping.get(type(child))
        if target is not None and (getattr(child, "qconfig", None) is not None or isinstance(child, DeQuantStub)):
            setattr(module, name, target.from_float(child))
        else:
            _swap_modules(child, mapping)


def _observe_output(module: Module, inputs, output):
    return module.activation_post_process(output)


def _add_observers(module: Module) -> None:
    for child in module.modules():
        if isinstance(child, OBSERVED_MODULES) and getattr(child, "qconfig", None) is not None:
            if "activation_post_process" not in child._modules:
                child.activation_post_process = child.qconfig.activation()
                child.register_forward_hook(_observe_output)


def prepare_qat(model: Module, mapping: dict | None = None, inplace: bool = False) -> Module:
    """Swap float modules for their QAT versions and add fake quantization after the observed ones."""
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    _swap_modules(model, DEFAULT_QAT_MODULE_MAPPINGS if mapping is None else mapping)
    _add_observers(model)
    return model


def convert(module: Module, mapping: dict | None = None, inplace: bool = False,
            remove_qconfig: bool = True) -> Module:
    """Replace QAT/observed modules by quantized ones (weights and qparams from their fake-quantizers)."""
    if not inplace:
        module = copy.deepcopy(module)
    _swap_modules(module, DEFAULT_STATIC_QUANT_MODULE_MAPPINGS if mapping is None else mapping)
    for child in module.modules():  # modules kept as they are (ReLU) drop their observers
        observer_hooks = [key for key, fn in child._forward_hooks.items() if fn is _observe_output]
        for key in observer_hooks:
            del child._forward_hooks[key]
        if observer_hooks and "activation_post_process" in child._modules:
            del child.activation_post_process
        if remove_qconfig and "qconfig" in child.__dict__:
            del child.qconfig
    return module
