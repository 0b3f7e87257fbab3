"""parallel_apply: run each replica on its inputs. minitorch runs them one after another in this thread
(the device queues still overlap on the GPU); results and the first exception come back as in PyTorch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...tensor import Tensor

__all__ = ["parallel_apply"]


def parallel_apply(modules: Sequence, inputs: Sequence, kwargs_tup: Sequence | None = None,
                   devices: Sequence | None = None) -> list[Any]:
    """``[modules[i](*inputs[i], **kwargs_tup[i]) for i]``; a Tensor input is passed as a single argument."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    elif len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs "
                             f"{len(kwargs_tup)}")
    outputs = []
    for module, args, kwargs in zip(modules, inputs, kwargs_tup):
        if isinstance(args, Tensor) or not isinstance(args, (list, tuple)):
            args = (args,)
        outputs.append(module(*args, **kwargs))
    return outputs
