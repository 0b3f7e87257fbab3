"""replicate: one copy of a module per device whose parameters are differentiable device copies of the
original's, so the replicas' gradients add up in the original parameters."""

from __future__ import annotations

from ...autograd import grad_mode
from ..modules.module import Module
from . import scatter_gather

__all__ = ["replicate"]


def _shallow_copy(module: Module) -> Module:
    """PyTorch's ``_replicate_for_data_parallel``: the same attributes, fresh parameter/buffer/child dicts."""
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica._parameters = {}
    replica._buffers = replica._buffers.copy()
    replica._modules = replica._modules.copy()
    replica._is_replica = True
    return replica


def replicate(network: Module, devices, detach: bool = False) -> list:
    """``len(devices)`` replicas of ``network``; with ``detach`` the copies do not require grad."""
    devices = [scatter_gather.cuda_device(d) for d in devices]
    scatter_gather.refuse_cpu(list(network.parameters()) + list(network.buffers()), "Broadcast")
    for m in network.modules():
        copy = getattr(m, "_replicate_for_data_parallel", None)
        if copy is not None:
            copy()  # a lazy module that is not initialized yet refuses
    replicas = []
    for dev in devices:
        copies: dict[int, Module] = {}
        for module in network.modules():
            copies[id(module)] = _shallow_copy(module)
        for module in network.modules():
            replica = copies[id(module)]
            for name, child in module._modules.items():
                replica._modules[name] = None if child is None else copies[id(child)]
            for name, param in module._parameters.items():
                if param is None:
                    replica._parameters[name] = None
                    continue
                with grad_mode.set_grad_enabled(not detach and grad_mode.is_grad_enabled()):
                    replica._parameters[name] = param.to(dev)
            for name, buf in module._buffers.items():
                replica._buffers[name] = None if buf is None else buf.to(dev)
        replicas.append(copies[id(network)])
    return replicas
