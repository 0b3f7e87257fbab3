"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

Random samplers draw from ``generator`` when given, else, as PyTorch's, from a fresh Generator seeded by
one ``random_()`` draw of the default CPU generator, so after ``minitorch.manual_seed(s)`` the shuffles are
PyTorch's. Each pass over a random sampler draws a fresh order (so each epoch of a DataLoader is shuffled
differently).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

from ... import _dtype
from ... import random as _random
from ...creation import as_tensor, empty

T_co = TypeVar("T_co", covariant=True)

_CHUNK = 32  # draws with replacement come this many at a time (PyTorch's RandomSampler): memory stays O(1)


def _in_chunks(num_samples: int, draw) -> Iterator[int]:
    """``num_samples`` indices from ``draw(k)`` (a tensor of ``k`` draws), drawn lazily in chunks, so
    ``num_samples=10**10`` costs nothing until iterated and the first items come at once."""
    for _ in range(num_samples // _CHUNK):
        yield from draw(_CHUNK).tolist()
    if num_samples % _CHUNK:
        yield from draw(num_samples % _CHUNK).tolist()


def draw_seed(generator=None) -> int:
    """One int64 ``random_()`` draw (PyTorch's way of seeding a sampler's or a loader iterator's stream)."""
    return int(empty((), dtype=_dtype.int64).random_(generator=generator).item())


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _check_bool(name: str, value, error: type = TypeError) -> None:
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` over indices (and ``__len__`` when known)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of Sampler should implement __iter__.")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation of the indices, or ``num_samples`` draws with ``replacement=True``.

    Without replacement and with ``num_samples > len(data_source)``, whole permutations follow one
    another and the last is cut short (PyTorch's rule).
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_bool("replacement", replacement)
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = _random.Generator().manual_seed(draw_seed())
        if self.replacement:
            yield from _in_chunks(self.num_samples, lambda k: _random.randint(n, (k,), generator=generator))
            return
        for _ in range(self.num_samples // n):
            yield from _random.randperm(n, generator=generator).tolist()
        yield from _random.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (a fresh order each pass)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _random.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (need not sum to 1).
    With replacement they are drawn lazily in chunks, the same draws as PyTorch's single call (``num_samples``
    is not bounded by ``len(weights)`` there); without, ``num_samples <= len(weights)``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None) -> None:
        _check_positive_int("num_samples", num_samples)
        _check_bool("replacement", replacement, ValueError)
        weights_tensor = as_tensor(weights, dtype=_dtype.float64)
        if weights_tensor.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        if self.replacement and self.num_samples > 1:  # chunks of 2+: one sample is PyTorch's other algorithm
            full, rest = divmod(self.num_samples, _CHUNK)
            if rest == 1:
                full, rest = full - 1, _CHUNK + 1
            for _ in range(full):
                yield from _random.multinomial(self.weights, _CHUNK, True, generator=self.generator).tolist()
            if rest:
                yield from _random.multinomial(self.weights, rest, True, generator=self.generator).tolist()
            return
        drawn = _random.multinomial(self.weights, self.num_samples, False, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups another sampler's indices into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        _check_positive_int("batch_size", batch_size)
        _check_bool("drop_last", drop_last, ValueError)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]
