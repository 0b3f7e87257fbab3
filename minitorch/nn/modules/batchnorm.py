"""``torch.nn.modules.batchnorm``: PyTorch's module path for the batch-norm layers (defined in normalization.py),
and ``SyncBatchNorm``, batch norm whose statistics span every rank of a process group."""

from __future__ import annotations

from ... import distributed as dist
from ...autograd import grad_mode
from ...distributed.nn import functional as dist_nn
from ...tensor import Tensor
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
           "SyncBatchNorm", "_BatchNorm", "_LazyNormBase", "_NormBase"]


class SyncBatchNorm(_BatchNorm):
    """Batch norm over the whole global batch: in training, with a process group of several ranks, the mean and
    variance of each channel are those of every rank's batch together, so N ranks with batches of B normalize
    exactly as one process with the batch of N * B does (running statistics included).

    The statistics are built from differentiable all-reduces (``torch.distributed.nn.functional``), so autograd
    derives the backward: each rank's input gradient includes what the global mean and variance pass back from
    the other ranks' losses. The weight and bias gradients are this rank's share, as in PyTorch (DDP averages
    them). minitorch's process groups run on MPI for CPU tensors, so unlike PyTorch (GPU only) the CPU is fine."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        group = self.process_group or dist.group.WORLD
        if not (self.training and dist.is_initialized() and dist.get_world_size(group) > 1):
            return super().forward(input)  # nothing to synchronize: plain batch norm
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        return _sync_batch_norm(input, self.weight, self.bias,
                                self.running_mean if self.track_running_stats else None,
                                self.running_var if self.track_running_stats else None,
                                self.eps, factor, group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` replaced by a SyncBatchNorm sharing its parameters and buffers."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with grad_mode.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


def _sync_batch_norm(input, weight, bias, running_mean, running_var, eps: float, factor: float, group) -> Tensor:
    """Normalize each channel (dim 1) with the mean and biased variance of all ranks' inputs together (two passes,
    so the variance does not cancel), and update the running statistics with the unbiased variance."""
    reduced = [0] + list(range(2, input.dim()))
    shape = [1, input.size(1)] + [1] * (input.dim() - 2)
    local_count = input.numel() // input.size(1)
    count = dist_nn.all_reduce(input.new_full((1,), float(local_count)).detach(), group=group)
    total = float(count)
    if total <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    mean = dist_nn.all_reduce(input.sum(reduced), group=group) / total
    centered = input - mean.view(shape)
    var = dist_nn.all_reduce((centered * centered).sum(reduced), group=group) / total
    out = centered * (var + eps).rsqrt().view(shape)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    if running_mean is not None:
        with grad_mode.no_grad():
            running_mean.mul_(1 - factor).add_(mean.detach() * factor)
            running_var.mul_(1 - factor).add_(var.detach() * (total / (total - 1)) * factor)
    return out


