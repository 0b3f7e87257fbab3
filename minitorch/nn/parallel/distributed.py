"""DistributedDataParallel: one replica of the module per process, gradients averaged over the processes.

PyTorch's design, on minitorch's autograd:
  * at construction rank 0's parameters and buffers are broadcast, so every replica starts equal;
  * the parameters are packed, in reverse order of registration (roughly the order backward produces their
    gradients), into buckets of at most ``bucket_cap_mb``;
  * a post-accumulate-grad hook on every parameter marks it ready; when all of a bucket's parameters are
    ready, the bucket's gradients are flattened into one buffer and an asynchronous all-reduce starts, while
    backward goes on computing the other gradients (overlap). Buckets start in index order on every rank, so
    all ranks issue the same collectives in the same order;
  * when the last bucket has started, DDP waits for all of them and writes the averaged gradients back;
  * ``no_sync()`` skips all of this, so gradients accumulate locally until a backward outside it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ... import distributed as dist
from ...autograd import grad_mode
from ...autograd.graph import AccumulateGrad
from ...ops.shape import cat
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


def _tensors_in(value) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)


def _reachable_leaves(outputs) -> set[int]:
    """ids of the leaf tensors the outputs' graph reaches (for ``find_unused_parameters``)."""
    seen, found = set(), set()
    stack = [t.grad_fn for t in _tensors_in(outputs) if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            found.add(id(node.variable))
        stack.extend(child for child, _ in node.next_functions)
    return found


class _Bucket:
    def __init__(self, params: list) -> None:
        self.params = params
        self.pending = 0
        self.work = None
        self.flat = None


class DistributedDataParallel(Module):
    """Wrap ``module`` so that ``backward`` leaves the same, averaged gradients on every rank."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs: Any) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.process_group = process_group
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._world_size = dist.get_world_size(process_group)
        with grad_mode.no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t.detach(), src=self._global_rank0(), group=process_group)
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._buckets = self._make_buckets(self._params)
        self._bucket_of = {}
        for index, bucket in enumerate(self._buckets):
            for p in bucket.params:
                self._bucket_of[id(p)] = index
        self._expect_backward = False
        self._next_bucket = 0
        self._unused: set[int] = set()
        self._handles = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self._params]

    def _global_rank0(self) -> int:
        return dist.get_process_group_ranks(self.process_group)[0] if self.process_group is not None else 0

    def _make_buckets(self, params: list) -> list[_Bucket]:
        """Reverse registration order, split when a bucket would exceed the cap or the dtype changes."""
        buckets, current, size = [], [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > self.bucket_bytes_cap or p.dtype != current[0].dtype):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._expect_backward and self._next_bucket:
            raise RuntimeError("Expected to have finished reduction in the prior iteration before starting a new "
                               "one. This error indicates that your module has parameters that were not used in "
                               "producing loss. You can enable unused parameter detection by passing the keyword "
                               "argument `find_unused_parameters=True` to `torch.nn.parallel."
                               "DistributedDataParallel`.")
        if self.broadcast_buffers:
            with grad_mode.no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b.detach(), src=self._global_rank0(), group=self.process_group)
        output = self.module(*inputs, **kwargs)
        syncing = grad_mode.is_grad_enabled() and self.require_backward_grad_sync
        self._expect_backward = syncing
        self._next_bucket = 0
        for bucket in self._buckets:
            bucket.pending = len(bucket.params)
            bucket.work = bucket.flat = None
        self._unused = set()
        if syncing and self.find_unused_parameters:
            used = _reachable_leaves(output)
            self._unused = {id(p) for p in self._params if id(p) not in used}
            for p in self._params:
                if id(p) in self._unused:
                    self._mark_ready(p)
        return output

    def _on_grad_ready(self, param: Tensor) -> None:
        if self._expect_backward:
            self._mark_ready(param)

    def _mark_ready(self, param: Tensor) -> None:
        bucket = self._buckets[self._bucket_of[id(param)]]
        bucket.pending -= 1
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _launch(self, bucket: _Bucket) -> None:
        """Flatten the bucket's gradients (zeros for a parameter this rank did not use) and start their all-reduce."""
        with grad_mode.no_grad():
            parts = [(p.detach().new_zeros(p.shape) if p.grad is None or id(p) in self._unused
                      else p.grad.detach()).reshape(-1) for p in bucket.params]
            bucket.flat = cat(parts) / self._world_size
        bucket.work = dist.all_reduce(bucket.flat, group=self.process_group, async_op=True)

    def _finish(self) -> None:
        """Wait for every bucket's all-reduce and write the averaged gradients back into ``.grad``."""
        self._expect_backward = False
        with grad_mode.no_grad():
            for bucket in self._buckets:
                bucket.work.wait()
                offset = 0
                for p in bucket.params:
                    n = p.numel()
                    averaged = bucket.flat[offset:offset + n].view(p.shape)
                    if p.grad is None:
                        p.grad = averaged.clone()
                    else:
                        p.grad.copy_(averaged)
                    offset += n
                bucket.work = bucket.flat = None
        self._next_bucket = 0

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally without communication (gradient accumulation)."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
