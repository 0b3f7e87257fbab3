"""scatter (split inputs along ``dim`` into one chunk per device) and gather (concatenate outputs on one
device). Both recurse through tuples, lists and dicts; other objects are copied by reference to each device.
Moving a tensor between devices is differentiable, so gradients flow back through both."""

from __future__ import annotations

import warnings
from typing import Any

from ..._device import device as as_device
from ...ops.shape import cat
from ...tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def cuda_device(index) -> Any:
    """A device id (int, 'cuda:i' or device) as the device; -1 or 'cpu' is the CPU (PyTorch's convention)."""
    if isinstance(index, int):
        return as_device("cpu") if index == -1 else as_device("cuda", index)
    return as_device(index)


def refuse_cpu(tensors, what: str) -> None:
    """PyTorch's device functions (broadcast, gather) have no CPU implementation; neither do these."""
    tensors = list(tensors)
    if tensors and all(t.device.type == "cpu" for t in tensors):
        raise AssertionError(f"{what} function not implemented for CPU tensors")


def scatter(inputs, target_gpus, dim: int = 0):
    """Slice tensors into ``len(target_gpus)`` chunks along ``dim`` (``Tensor.chunk``), chunk i on device i."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(target_gpus), dim)
            return [chunk.to(cuda_device(d)) for chunk, d in zip(chunks, target_gpus)]
        if isinstance(obj, tuple) and len(obj) > 0:
            if hasattr(obj, "_fields"):  # a namedtuple
                return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus, dim: int = 0) -> tuple:
    """``scatter`` of the positional and keyword inputs, padded to the same number of devices."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim: int = 0):
    """Concatenate the per-device ``outputs`` along ``dim`` on ``target_device`` (-1: the CPU)."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            refuse_cpu(outputs, "Gather")
            target = cuda_device(target_device)
            if all(o.dim() == 0 for o in outputs):
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; will "
                              "instead unsqueeze and return a vector.", stacklevel=3)
                outputs = [o.reshape(1) for o in outputs]
            return cat([o.to(target) for o in outputs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        return type(out)(map(gather_map, zip(*outputs)))

    return gather_map(outputs)
