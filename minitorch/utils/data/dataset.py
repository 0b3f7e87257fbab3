"""Datasets: map-style (``__getitem__`` + ``__len__``) and iterable-style, and ways to combine them.

The classes and their behaviour are PyTorch's ``torch.utils.data`` ones: ``TensorDataset`` pairs
tensors along their first dimension, ``Subset`` selects indices, ``ConcatDataset``/``ChainDataset``
join datasets, ``StackDataset`` zips them, and ``random_split`` cuts a dataset into random pieces.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ... import random as _random
from ...tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    A subclass may also define ``__getitems__(indices) -> list`` to fetch a whole batch of samples
    in one call; the DataLoader uses it when present.
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__`` (and ``__len__`` if it is known)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are the rows of tensors that share their first dimension: ``ds[i] == (x[i], y[i])``.

    The DataLoader fetches a batch of a TensorDataset with one gather per tensor (see dataloader.py).
    """

    tensors: tuple

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expected tensors, got {type(t).__name__}")
            if t.dim() == 0:
                raise ValueError("TensorDataset: tensors need a first dimension to index, got a 0-d tensor")
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise AssertionError(f"Size mismatch between tensors (first dimensions {sizes})")
        self.tensors = tensors

    def __getitem__(self, index) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0) if self.tensors else 0


class StackDataset(Dataset):
    """Zips datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, but both "
                "types are given."
            )
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets: tuple | dict = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after the other; ``cumulative_sizes[i]`` is where dataset ``i`` ends."""

    datasets: list
    cumulative_sizes: list

    @staticmethod
    def cumsum(sequence: Sequence) -> list:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx >= len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} is out of range for a dataset of length {len(self)}")
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other (lazily; each is iterated when its turn comes)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    dataset: Dataset
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        """A batch of samples; forwards to the wrapped dataset's ``__getitems__`` when it has one."""
        mapped = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(mapped)
        return [self.dataset[i] for i in mapped]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(n: int, lengths: Sequence[int | float]) -> list:
    """Fractions summing to 1 become counts: floor(n * fraction) each, then the remainder is dealt
    out one by one, round-robin from the first split (PyTorch's rule)."""
    total = sum(lengths)
    if not (math.isclose(total, 1) and total <= 1):
        return list(lengths)
    counts = []
    for i, fraction in enumerate(lengths):
        if fraction < 0 or fraction > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts.append(int(math.floor(n * fraction)))
    for i in range(n - sum(counts)):
        counts[i % len(counts)] += 1
    for i, count in enumerate(counts):
        if count == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=3)
    return counts


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator=None) -> list:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths (or fractions
    that sum to 1). ``generator`` (default: the default CPU generator) makes the split reproducible."""
    lengths = _split_lengths(len(dataset), lengths)
    if any(length < 0 for length in lengths):
        raise ValueError(f"random_split: lengths must be non-negative, got {lengths}")
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    generator = _random.default_generator if generator is None else generator
    indices = _random.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]


def _is_plain(obj: Any, cls: type) -> bool:
    """``obj`` is a ``cls`` whose item access is ``cls``'s own (not overridden by a subclass)."""
    kind = type(obj)
    return (
        isinstance(obj, cls)
        and kind.__getitem__ is cls.__getitem__
        and getattr(kind, "__getitems__", None) is getattr(cls, "__getitems__", None)
    )


__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]
