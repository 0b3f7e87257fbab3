"""``torch.ao.quantization``: observers, fake quantization, QConfig, prepare_qat and convert."""

from ...quantization import (
    DeQuantStub,
    FakeQuantize,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
    QConfig,
    QuantStub,
    convert,
    default_fake_quant,
    default_observer,
    default_per_channel_weight_fake_quant,
    default_per_channel_weight_observer,
    default_weight_observer,
    get_default_qat_qconfig,
    prepare_qat,
    propagate_qconfig_,
)

__all__ = [
    "DeQuantStub", "FakeQuantize", "MinMaxObserver", "MovingAverageMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver", "PerChannelMinMaxObserver", "QConfig", "QuantStub", "convert",
    "default_fake_quant", "default_observer", "default_per_channel_weight_fake_quant",
    "default_per_channel_weight_observer", "default_weight_observer", "get_default_qat_qconfig", "prepare_qat",
    "propagate_qconfig_",
]
