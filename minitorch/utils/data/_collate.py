"""``default_collate`` / ``default_convert``: how a list of samples becomes one batch.

PyTorch's rules, type by type: tensors are stacked along a new first dimension; numpy arrays become
tensors and are stacked; Python floats become a float64 tensor, ints an int64 tensor (bools a bool
tensor); strings and bytes stay a list; dicts, namedtuples, tuples and lists are collated field by
field (a batch of tuples gives a *list* of batches, as in PyTorch).
"""

from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any

from ... import _dtype
from ..._backends import backend_for
from ..._device import CPU
from ...creation import as_tensor, tensor
from ...ops.shape import stack
from ...tensor import Tensor

# numpy dtype kinds that cannot become tensors: bytes, str, unicode, object
_NP_STR_OBJ = re.compile(r"[SaUO]")

_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_CONVERT_ERROR = "default_convert: numpy arrays of strings or objects cannot become tensors; found {}"


def _numpy():
    """numpy, as the CPU backend hands it out (only ``_backends/`` imports it)."""
    return backend_for(CPU).xp


def _is_numpy_array(x) -> bool:
    return isinstance(x, _numpy().ndarray)


def _is_numpy_scalar(x) -> bool:
    return isinstance(x, _numpy().generic)


def default_convert(data: Any) -> Any:
    """Turn numpy arrays and numpy scalars inside ``data`` into tensors, keeping the containers.

    The ``collate_fn`` of a DataLoader with ``batch_size=None`` (no batching): samples pass through
    one at a time, so nothing is stacked.
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy_array(data) or _is_numpy_scalar(data):
        if _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return type(data)({key: default_convert(data[key]) for key in data})
        except TypeError:  # a mapping type that cannot be copied or rebuilt from a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # PyTorch's backwards-compatible choice
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return type(data)([default_convert(d) for d in data])
        except TypeError:  # e.g. range
            return [default_convert(d) for d in data]
    return data


def default_collate(batch: list) -> Any:
    """Merge a list of samples into a batch (the DataLoader's default ``collate_fn``).

    ``default_collate([(x0, 0), (x1, 1)])`` gives ``[stack([x0, x1]), tensor([0, 1])]``.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if _is_numpy_array(elem):
        if _NP_STR_OBJ.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if _is_numpy_scalar(elem):
        if _NP_STR_OBJ.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return as_tensor(_numpy().asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):  # bool too: a bool tensor, as torch.tensor([True, ...]) gives
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(collated)
                return clone
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]  # PyTorch's backwards-compatible choice
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


__all__ = ["default_collate", "default_convert"]
