"""DataParallel: split each batch across the CUDA devices, run a replica of the module on each chunk and
gather the outputs. With no GPU it is a transparent wrapper, as in a CPU-only PyTorch: ``forward`` calls the
module and the state dict keys get the ``module.`` prefix (so checkpoints interchange with PyTorch's)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

from ... import cuda
from ...autograd import grad_mode
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import cuda_device, gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _device_index(device) -> int:
    """A device id as an int (``'cuda:1'`` -> 1)."""
    if isinstance(device, int):
        return device
    index = cuda_device(device).index
    return 0 if index is None else index


def _check_module_device(module: Module, src) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} (device_ids[0]) but "
                               f"found one of them on device: {t.device}")


class DataParallel(Module):
    """Run ``module`` over the batch split along ``dim`` across ``device_ids`` (all GPUs by default)."""

    def __init__(self, module: Module, device_ids: Sequence | None = None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = cuda_device(self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_module_device(self.module, self.src_device_obj)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module: Module, device_ids: Sequence) -> list:
        return replicate(module, device_ids, not grad_mode.is_grad_enabled())

    def scatter(self, inputs: tuple, kwargs: dict | None, device_ids: Sequence) -> tuple:
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas: Sequence, inputs: Sequence, kwargs: Any) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs: Any, output_device) -> Any:
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence | None = None, output_device=None, dim: int = 0,
                  module_kwargs: Any | None = None) -> Any:
    """The functional form of ``DataParallel`` (no wrapper module); needs a GPU, as in PyTorch."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_device_index(d) for d in device_ids]
    src = cuda_device(device_ids[0])
    _check_module_device(module, src)
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[: len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, _device_index(output_device), dim)
