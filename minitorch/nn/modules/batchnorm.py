"""``torch.nn.modules.batchnorm``: PyTorch's module path for the batch-norm layers, defined in normalization.py."""

from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    _BatchNorm,
    _LazyNormBase,
    _NormBase,
)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "_BatchNorm", "_LazyNormBase", "_NormBase"]
